package storedoc

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/signing"
)

// TestRoundTrip: what each document encodes, it decodes unchanged, with
// zero times kept zero (they are stored as 0).
func TestRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 30, 0, 123e6, time.UTC)
	for _, tc := range []struct {
		name string
		in   any
		rt   func(any) (any, error)
	}{
		{"config", &push.Config{ID: "c1", TaskID: "t1", OwnerID: "o1", URL: "https://example.com/hook", Token: "tok",
			AuthScheme: "Bearer", AuthCredentials: "secret", CreatedAt: at},
			func(v any) (any, error) {
				b, err := EncodePushConfig(v.(*push.Config))
				if err != nil {
					return nil, err
				}
				c, err := DecodePushConfig(b)
				return &c, err
			}},
		{"delivery pending", &push.Delivery{ID: "d1", TaskID: "t1", ConfigID: "c1", OwnerID: "o1", Destination: "example.com:443",
			State: push.Pending, Event: json.RawMessage(`{"statusUpdate":{}}`), CreatedAt: at, NextAt: at.Add(time.Second)},
			func(v any) (any, error) {
				b, err := EncodeDelivery(v.(*push.Delivery))
				if err != nil {
					return nil, err
				}
				d, err := DecodeDelivery(b)
				return &d, err
			}},
		{"delivery with attempts", &push.Delivery{ID: "d2", TaskID: "t1", ConfigID: "c1", OwnerID: "o1", Destination: "example.com:443",
			State: push.Failed, Event: json.RawMessage(`{}`), CreatedAt: at, Attempts: 2, FinishedAt: at.Add(time.Minute), Reason: "gone",
			Recent: []push.Attempt{{At: at, Duration: 1500 * time.Microsecond, Status: 503, Outcome: push.Outcome("retry"), NextAt: at.Add(2 * time.Second)},
				{At: at.Add(time.Minute), Duration: time.Millisecond, Status: 410, Error: "gone", Outcome: push.Outcome("failed")}}},
			func(v any) (any, error) {
				b, err := EncodeDelivery(v.(*push.Delivery))
				if err != nil {
					return nil, err
				}
				d, err := DecodeDelivery(b)
				return &d, err
			}},
		{"signing key", &signing.KeyRecord{ID: "k1", Algorithm: "ES256", Private: []byte{1, 2, 3}, CreatedAt: at},
			func(v any) (any, error) {
				b, err := EncodeSignKey(v.(*signing.KeyRecord))
				if err != nil {
					return nil, err
				}
				k, err := DecodeSignKey(b)
				return &k, err
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.rt(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.in) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tc.in)
			}
		})
	}
	for _, bad := range []func([]byte) error{
		func(b []byte) error { _, err := DecodePushConfig(b); return err },
		func(b []byte) error { _, err := DecodeDelivery(b); return err },
		func(b []byte) error { _, err := DecodeSignKey(b); return err },
	} {
		if bad([]byte("{not json")) == nil {
			t.Error("a broken document decoded")
		}
	}
}
