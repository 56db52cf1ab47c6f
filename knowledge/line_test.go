package knowledge

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseLine(t *testing.T) {
	long := strings.Repeat("x", MaxTitleLen+1)
	tests := []struct {
		name      string
		line      string
		wantField string // "" with wantErr means a line-level error
		wantErr   string // substring of the message; "" means valid
	}{
		{"minimal", `{"id":"a","kind":"fix","title":"T","body":"B"}`, "", ""},
		{"full", `{"id":"a-1.b_c","kind":"fix","product":"go","environment":"linux","title":"T","body":"line1\n\tline2","tags":["x","y"],"url":"https://example.com/a?b=c","updatedAt":"2026-01-02T03:04:05.678+02:00"}`, "", ""},
		{"missing id", `{"kind":"fix","title":"T","body":"B"}`, "id", "is required"},
		{"null title", `{"id":"a","kind":"fix","title":null,"body":"B"}`, "title", "is required"},
		{"missing body", `{"id":"a","kind":"fix","title":"T"}`, "body", "is required"},
		{"blank title", `{"id":"a","kind":"fix","title":"   ","body":"B"}`, "title", "must not be empty"},
		{"title too long", `{"id":"a","kind":"fix","title":"` + long + `","body":"B"}`, "title", "at most 300"},
		{"newline in title", `{"id":"a","kind":"fix","title":"a\nb","body":"B"}`, "title", "control character"},
		{"carriage return in body", `{"id":"a","kind":"fix","title":"T","body":"a\r\nb"}`, "body", "carriage return"},
		{"escape char in body", `{"id":"a","kind":"fix","title":"T","body":"a\u001b[2Jb"}`, "body", "control character"},
		{"id with space", `{"id":"a b","kind":"fix","title":"T","body":"B"}`, "id", "not allowed"},
		{"id with slash", `{"id":"a/b","kind":"fix","title":"T","body":"B"}`, "id", "not allowed"},
		{"id starting with dash", `{"id":"-a","kind":"fix","title":"T","body":"B"}`, "id", "must start"},
		{"id too long", `{"id":"` + strings.Repeat("a", MaxIDLen+1) + `","kind":"fix","title":"T","body":"B"}`, "id", "at most 128"},
		{"relative url", `{"id":"a","kind":"fix","title":"T","body":"B","url":"/docs/a"}`, "url", "absolute http"},
		{"javascript url", `{"id":"a","kind":"fix","title":"T","body":"B","url":"javascript:alert(1)"}`, "url", "absolute http"},
		{"url with credentials", `{"id":"a","kind":"fix","title":"T","body":"B","url":"https://u:p@example.com/"}`, "url", "password"},
		{"url with space", `{"id":"a","kind":"fix","title":"T","body":"B","url":"https://example.com/a b"}`, "url", "spaces"},
		{"bad time", `{"id":"a","kind":"fix","title":"T","body":"B","updatedAt":"yesterday"}`, "updatedAt", "RFC 3339"},
		{"tags not an array", `{"id":"a","kind":"fix","title":"T","body":"B","tags":"x"}`, "tags", "array of strings"},
		{"too many tags", `{"id":"a","kind":"fix","title":"T","body":"B","tags":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17","18","19","20","21"]}`, "tags", "at most 20"},
		{"empty tag", `{"id":"a","kind":"fix","title":"T","body":"B","tags":[""]}`, "tags[0]", "must not be empty"},
		{"number for kind", `{"id":"a","kind":3,"title":"T","body":"B"}`, "kind", "must be a string"},
		{"unknown field", `{"id":"a","kind":"fix","title":"T","body":"B","updated_at":"x"}`, "updated_at", "unknown field"},
		{"not json", `id=a`, "", "not valid JSON"},
		{"truncated json", `{"id":"a","kind":"fix"`, "", "not valid JSON"},
		{"array", `[1,2]`, "", "JSON object"},
		{"two objects", `{"id":"a","kind":"fix","title":"T","body":"B"}{"id":"b"}`, "", "one record on each line"},
		{"invalid utf-8", "{\"id\":\"a\",\"kind\":\"fix\",\"title\":\"T\xff\",\"body\":\"B\"}", "", "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseLine(7, []byte(tt.line))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if err := r.Validate(); err != nil {
					t.Fatalf("parsed record does not validate: %v", err)
				}
				return
			}
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v (%T), want a *LineError", err, err)
			}
			if le.Line != 7 || le.Field != tt.wantField || !strings.Contains(le.Message, tt.wantErr) {
				t.Fatalf("got line %d field %q message %q; want line 7 field %q message containing %q",
					le.Line, le.Field, le.Message, tt.wantField, tt.wantErr)
			}
		})
	}
}

func TestParseLineTime(t *testing.T) {
	r, err := ParseLine(1, []byte(`{"id":"a","kind":"fix","title":"T","body":"B","updatedAt":"2026-01-02T03:04:05.678999+02:00"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 1, 2, 1, 4, 5, 678e6, time.UTC)
	if !r.UpdatedAt.Equal(want) || r.UpdatedAt.Location() != time.UTC {
		t.Fatalf("updatedAt %s, want %s (UTC, milliseconds)", r.UpdatedAt, want)
	}
}

func TestMerge(t *testing.T) {
	now := time.Date(2026, 5, 1, 0, 0, 0, 123456789, time.UTC)
	old := Record{ID: "a", Kind: "fix", Title: "T", Body: "B", UpdatedAt: now.Add(-time.Hour)}
	tests := []struct {
		name        string
		existing    *Record
		in          Record
		want        Outcome
		wantUpdated time.Time
	}{
		{"new, no time", nil, Record{ID: "a", Kind: "fix", Title: "T", Body: "B"}, Added, now.Truncate(time.Millisecond)},
		{"same, no time", &old, Record{ID: "a", Kind: "fix", Title: "T", Body: "B"}, Unchanged, old.UpdatedAt},
		{"same, same time", &old, old, Unchanged, old.UpdatedAt},
		{"same, other time", &old, Record{ID: "a", Kind: "fix", Title: "T", Body: "B", UpdatedAt: now.Add(-2 * time.Hour)}, Updated, now.Add(-2 * time.Hour)},
		{"different body", &old, Record{ID: "a", Kind: "fix", Title: "T", Body: "B2"}, Updated, now.Truncate(time.Millisecond)},
		{"tags nil vs empty", &old, Record{ID: "a", Kind: "fix", Title: "T", Body: "B", Tags: []string{}}, Unchanged, old.UpdatedAt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, o := Merge(tt.existing, tt.in, now)
			if o != tt.want {
				t.Fatalf("outcome %v, want %v", o, tt.want)
			}
			if !got.UpdatedAt.Equal(tt.wantUpdated) {
				t.Fatalf("updatedAt %s, want %s", got.UpdatedAt, tt.wantUpdated)
			}
		})
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add([]byte(`{"id":"a","kind":"fix","title":"T","body":"B","tags":["x"],"url":"https://e.com","updatedAt":"2026-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"id":"a","kind":"fix","title":"T","body":"B\u0000"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte("\xff"))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseLine(1, line)
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Line != 1 || le.Message == "" {
				t.Fatalf("error %v is not a numbered *LineError", err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("accepted a record that does not validate: %v", err)
		}
	})
}
