package service

import (
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
)

// TestTaskFilter: ListTasks and the operator's listing read their filters
// with one function; each refusal names the parameter as its surface
// calls it.
func TestTaskFilter(t *testing.T) {
	a2aNames := taskFilter{stateField: "status", sinceField: "statusTimestampAfter"}
	adminNames := taskFilter{stateField: "state", sinceField: "since"}
	with := func(base taskFilter, f func(*taskFilter)) taskFilter { f(&base); return base }
	for _, tc := range []struct {
		name  string
		f     taskFilter
		field string // of the refusal; "" when accepted
	}{
		{"no filter", a2aNames, ""},
		{"a state", with(a2aNames, func(f *taskFilter) { f.State = "TASK_STATE_WORKING" }), ""},
		{"an unknown state (A2A)", with(a2aNames, func(f *taskFilter) { f.State = "TASK_STATE_SLEEPING" }), "status"},
		{"an unknown state (admin)", with(adminNames, func(f *taskFilter) { f.State = "TASK_STATE_SLEEPING" }), "state"},
		{"a time", with(adminNames, func(f *taskFilter) { f.Since = "2026-12-02T10:30:00Z" }), ""},
		{"not a time (A2A)", with(a2aNames, func(f *taskFilter) { f.Since = "yesterday" }), "statusTimestampAfter"},
		{"not a time (admin)", with(adminNames, func(f *taskFilter) { f.Since = "yesterday" }), "since"},
		{"a context id too long", with(adminNames, func(f *taskFilter) { f.ContextID = strings.Repeat("c", 129) }), "contextId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.f.params()
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tc.f.Since != "" && !p.Since.Equal(time.Date(2026, 12, 2, 10, 30, 0, 0, time.UTC)) {
					t.Fatalf("since %v", p.Since)
				}
				return
			}
			e := ToError(err)
			if e.Kind != a2a.InvalidParams || len(e.Violations) != 1 || e.Violations[0].Field != tc.field {
				t.Fatalf("refusal %+v, want one naming %s", e, tc.field)
			}
		})
	}
}

// TestMayReply: who may reply, on every surface (the API, the web's form,
// the operator's reply as an agent).
func TestMayReply(t *testing.T) {
	active := agents.Agent{ID: "01JD0000000000000000000001", Name: "wes", Scopes: []agents.Scope{agents.ScopePost}}
	revoked := active
	revoked.DisabledAt = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	reader := agents.Agent{ID: "01JD0000000000000000000002", Name: "rita", Scopes: []agents.Scope{agents.ScopeRead}}
	for _, tc := range []struct {
		name string
		a    agents.Agent
		kind *a2a.Kind
	}{
		{"an active agent with post", active, nil},
		{"a revoked agent", revoked, &a2a.UnsupportedOperation},
		{"an agent without post", reader, &a2a.PermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mayReply(tc.a)
			if tc.kind == nil {
				if err != nil || !CanReply(Caller{Agent: &tc.a}) {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if e := ToError(err); err == nil || e.Kind != *tc.kind || e.Metadata["agentId"] != tc.a.ID {
				t.Fatalf("mayReply = %v, want %s naming the agent", err, tc.kind.Reason)
			}
			if CanReply(Caller{Agent: &tc.a}) {
				t.Fatal("CanReply offers the reply mayReply refuses")
			}
		})
	}
	if CanReply(Caller{}) {
		t.Fatal("an anonymous caller may reply")
	}
}
