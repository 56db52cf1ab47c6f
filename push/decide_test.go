package push

import (
	"errors"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
)

var t0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

// revoked is alice, revoked since her request was authenticated.
var revoked = &agents.Agent{ID: "alice", DisabledAt: t0.Add(-time.Second)}

func TestDecidePut(t *testing.T) {
	working := &TaskRef{ID: "t1", OwnerID: "alice", State: a2a.TaskStateWorking}
	done := &TaskRef{ID: "t1", OwnerID: "alice", State: a2a.TaskStateCompleted}
	c := Config{ID: "c9", TaskID: "t1", OwnerID: "alice"}
	for _, tc := range []struct {
		name    string
		st      PutState
		c       Config
		max     int
		want    error
		created bool
	}{
		{"no task", PutState{}, c, 10, ErrTaskNotFound, false},
		{"another agent's task", PutState{Task: working}, Config{ID: "c9", TaskID: "t1", OwnerID: "bob"}, 10, ErrTaskNotFound, false},
		{"the operator's", PutState{Task: working}, Config{ID: "c9", TaskID: "t1"}, 10, nil, true},
		{"a finished task", PutState{Task: done}, c, 10, ErrTaskTerminal, false},
		{"new", PutState{Task: working, ConfigIDs: []string{"c1"}}, c, 10, nil, true},
		{"a replacement at the bound", PutState{Task: working, ConfigIDs: []string{"c1", "c9"}}, c, 2, nil, false},
		{"new at the bound", PutState{Task: working, ConfigIDs: []string{"c1", "c2"}}, c, 2, ErrTooManyConfigs, false},
		{"no bound", PutState{Task: working, ConfigIDs: []string{"c1", "c2"}}, c, 0, nil, true},
		{"a revoked owner", PutState{Owner: revoked, Task: working}, c, 10, agents.ErrRevoked, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st
			if st.Owner == nil && tc.c.OwnerID != "" {
				st.Owner = &agents.Agent{ID: tc.c.OwnerID}
			}
			created, err := DecidePut(st, tc.c, tc.max)
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) || created != tc.created {
				t.Fatalf("created %v, err %v; want %v, %v", created, err, tc.created, tc.want)
			}
		})
	}
}

func TestDecideDelete(t *testing.T) {
	task := &TaskRef{ID: "t1", OwnerID: "alice", State: a2a.TaskStateCompleted}
	pending := []Delivery{
		{ID: "d1", ConfigID: "c1", State: Pending, NextAt: t0},
		{ID: "d2", ConfigID: "c2", State: Pending, NextAt: t0},
	}
	for _, tc := range []struct {
		name    string
		st      DeleteState
		owner   string
		want    error
		deleted bool
		failed  []string
	}{
		{"no task", DeleteState{}, "alice", ErrTaskNotFound, false, nil},
		{"another agent's task", DeleteState{Task: task, Exists: true}, "bob", ErrTaskNotFound, false, nil},
		{"a config the task does not have", DeleteState{Task: task, Pending: pending}, "alice", nil, false, nil},
		{"deleted: its pending deliveries fail", DeleteState{Task: task, Exists: true, Pending: pending}, "alice", nil, true, []string{"d1"}},
		{"the operator's", DeleteState{Task: task, Exists: true}, "", nil, true, nil},
		{"a revoked owner", DeleteState{Owner: revoked, Task: task, Exists: true, Pending: pending}, "alice", agents.ErrRevoked, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st
			if st.Owner == nil && tc.owner != "" {
				st.Owner = &agents.Agent{ID: tc.owner}
			}
			out, err := DecideDelete(st, tc.owner, "c1", t0.Add(time.Hour))
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) || out.Deleted != tc.deleted || len(out.Failed) != len(tc.failed) {
				t.Fatalf("out %+v, err %v", out, err)
			}
			for i, d := range out.Failed {
				if d.ID != tc.failed[i] || d.State != Failed || !d.FinishedAt.Equal(t0.Add(time.Hour)) || !d.NextAt.IsZero() || d.Reason != DeleteReason {
					t.Fatalf("failed delivery %+v", d)
				}
			}
			if pending[0].State != Pending {
				t.Fatal("the decision changed the deliveries it was given")
			}
		})
	}
}

func TestDeliveries(t *testing.T) {
	tr := Transition{TaskID: "t1", ContextID: "ctx", OwnerID: "alice", State: a2a.TaskStateCanceled, At: t0}
	if ds, evs, err := Deliveries(tr, nil); err != nil || ds != nil || evs != nil {
		t.Fatalf("no configs: %v %v %v", ds, evs, err)
	}
	ds, evs, err := Deliveries(tr, []Config{{ID: "a", URL: "https://x.example.com/h"}, {ID: "b", URL: "https://y.example.com:8443/"}})
	if err != nil || len(ds) != 2 || len(evs) != 2 {
		t.Fatalf("%v %v %v", ds, evs, err)
	}
	if ds[0].ID == ds[1].ID || ds[1].Destination != "https://y.example.com:8443" || evs[1].Kind != changelog.DeliveryDue ||
		evs[1].ID != ds[1].ID || evs[1].Ref != ds[1].Destination || !ds[0].NextAt.Equal(t0) {
		t.Fatalf("deliveries %+v, events %+v", ds, evs)
	}
	again, _, err := Deliveries(tr, []Config{{ID: "a", URL: "https://x.example.com/h"}})
	if err != nil || len(again) != 1 {
		t.Fatalf("again: %+v %v", again, err)
	}
	if again[0].ID != ds[0].ID {
		t.Fatal("the same transition made another delivery id")
	}
	tr.State = a2a.TaskStateCompleted
	other, _, err := Deliveries(tr, []Config{{ID: "a", URL: "https://x.example.com/h"}})
	if err != nil || len(other) != 1 {
		t.Fatalf("completed: %+v %v", other, err)
	}
	if other[0].ID == ds[0].ID {
		t.Fatal("another transition made the same delivery id")
	}
}
