package server

import (
	"context"
	"io"
	"path/filepath"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/admin"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/store"
)

// adminStore gives the admin API the store's day-2 operations in the API's
// shapes, so the admin package never imports the store.
type adminStore struct{ db *store.DB }

func (a adminStore) Stats() (api.Stats, error) {
	st, err := a.db.Stats()
	if err != nil {
		return api.Stats{}, err
	}
	out := api.Stats{
		Database: api.DatabaseStats{Path: st.Path, Backend: api.BackendBBolt, SchemaVersion: st.SchemaVersion, SizeBytes: st.SizeBytes,
			PageSize: st.PageSize, FreePages: st.FreePages, PendingPages: st.PendingPages},
		Tasks: api.TaskStats{Total: st.Tasks, ByState: map[string]int{
			string(a2a.TaskStateWorking): 0, string(a2a.TaskStateCompleted): 0, string(a2a.TaskStateCanceled): 0,
		}},
		Discussions: api.DiscussionStats{Total: st.Discussions, Open: st.Open, Answered: st.Answered},
		Agents:      st.Agents,
		Records:     st.Records,
		LogPosition: st.LogPosition.String(),
	}
	for s, n := range st.TasksByState {
		out.Tasks.ByState[string(s)] = n
	}
	if o := st.OldestWaiting; o != nil {
		out.Tasks.OldestWaiting = &api.WaitingTask{ID: o.ID, OwnerID: o.OwnerID, Since: a2a.FormatTime(o.Since)}
	}
	return out, nil
}

func (a adminStore) Check(ctx context.Context, pages bool) (api.CheckReport, error) {
	rep, err := a.db.CheckWith(ctx, store.CheckOptions{Pages: pages})
	if err != nil {
		return api.CheckReport{}, err
	}
	return CheckReportJSON(rep), nil
}

func (a adminStore) Backup(w io.Writer, size func(int64)) (int64, error) { return a.db.Backup(w, size) }

func (a adminStore) Identity(ctx context.Context) (api.StoreIdentity, error) {
	st, err := a.db.LogState(ctx)
	if err != nil {
		return api.StoreIdentity{}, err
	}
	path, err := filepath.Abs(a.db.Path()) // the CLI may run elsewhere
	if err != nil {
		path = a.db.Path()
	}
	return api.StoreIdentity{Backend: api.BackendBBolt, Name: path, ID: st.Epoch}, nil
}

// CheckReportJSON converts a store check report to its JSON shape.
func CheckReportJSON(rep store.CheckReport) api.CheckReport {
	out := api.CheckReport{OK: rep.OK(), Path: rep.Path, SchemaVersion: rep.SchemaVersion, Examined: rep.Examined,
		Violations: make([]api.Violation, len(rep.Violations)), Truncated: rep.Truncated, Notes: rep.Notes}
	if out.Examined == nil {
		out.Examined = map[string]int{}
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	for i, v := range rep.Violations {
		out.Violations[i] = api.Violation{Kind: v.Kind, Bucket: v.Bucket, Key: v.Key, KeyHex: v.KeyHex, TaskID: v.TaskID, Detail: v.Detail}
	}
	return out
}

// AdminStore returns the admin API's view of db.
func AdminStore(db *store.DB) admin.Store { return adminStore{db} }
