package push

import (
	"errors"
	"testing"

	"github.com/kfa-project/kfa/input"
)

func TestNewDeliveryQuery(t *testing.T) {
	for _, tc := range []struct {
		name     string
		state    string
		pageSize *int
		want     DeliveryQuery
		field    string // of the refusal; "" when accepted
	}{
		{name: "defaults", want: DeliveryQuery{PageSize: DefaultDeliveryPageSize, TaskID: "t", After: "d"}},
		{name: "failed, a page of 3", state: "failed", pageSize: new(3),
			want: DeliveryQuery{State: Failed, PageSize: 3, TaskID: "t", After: "d"}},
		{name: "an unknown state", state: "lost", field: "state"},
		{name: "pageSize 0", pageSize: new(0), field: "pageSize"},
		{name: "pageSize over the maximum", pageSize: new(MaxDeliveryPageSize + 1), field: "pageSize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := NewDeliveryQuery(tc.state, "t", tc.pageSize, "d")
			var ie *input.Error
			switch {
			case tc.field == "" && (err != nil || q != tc.want):
				t.Fatalf("NewDeliveryQuery = %+v, %v; want %+v", q, err, tc.want)
			case tc.field != "" && (!errors.As(err, &ie) || ie.Field != tc.field):
				t.Fatalf("NewDeliveryQuery = %+v, %v; want a refusal of %s", q, err, tc.field)
			}
		})
	}
}
