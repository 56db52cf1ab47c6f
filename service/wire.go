package service

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// The JSON answers below are what GetTask and ListTasks answer, as bytes
// ready to write: each task is its wire JSON as stored when the task was
// last written (tasks.WireJSON), so showing a task decodes and encodes
// nothing. They are byte for byte what encoding/json makes of the
// a2a.Task and a2a.ListTasksResponse that GetTask and ListTasks return.

// GetTaskJSON is GetTask answered as the JSON of the a2a.Task.
func (s *Service) GetTaskJSON(ctx context.Context, c Caller, id string, historyLength *int) ([]byte, error) {
	ag, err := requireAgent(c, "GetTask")
	if err != nil {
		return nil, err
	}
	if historyLength != nil && *historyLength < 0 {
		return nil, a2a.BadParam("historyLength", "must not be negative")
	}
	t, err := s.deps.Tasks.GetSnapshot(ctx, ag.ID, id)
	if err != nil {
		return nil, s.taskError(id, err)
	}
	return t.Wire.Append(make([]byte, 0, wireLen(&t.Wire)+1), tasks.View{HistoryLength: historyLength, IncludeArtifacts: true}), nil
}

// ListTasksJSON is ListTasks answered as the JSON of the
// a2a.ListTasksResponse.
func (s *Service) ListTasksJSON(ctx context.Context, c Caller, req ListTasksRequest) ([]byte, error) {
	ag, p, view, err := s.listParams(c, req)
	if err != nil {
		return nil, err
	}
	res, err := s.deps.Tasks.ListSnapshots(ctx, ag.ID, p)
	if err != nil {
		return nil, err
	}
	n := 96 + len(res.NextPageToken)
	for i := range res.Tasks {
		n += wireLen(&res.Tasks[i].Wire) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"tasks":[`...)
	for i := range res.Tasks {
		if i > 0 {
			b = append(b, ',')
		}
		b = res.Tasks[i].Wire.Append(b, view)
	}
	b = append(b, `],"nextPageToken":`...)
	tok, err := json.Marshal(res.NextPageToken)
	if err != nil {
		return nil, err
	}
	b = append(b, tok...)
	b = append(b, `,"pageSize":`...)
	b = strconv.AppendInt(b, int64(res.PageSize), 10)
	b = append(b, `,"totalSize":`...)
	b = strconv.AppendInt(b, int64(res.TotalSize), 10)
	return append(b, '}'), nil
}

// wireLen bounds the length of a task's JSON under any view.
func wireLen(w *tasks.WireJSON) int {
	return len(w.Head) + len(w.Status) + len(w.Artifacts) + len(w.History) + len(w.Metadata) + 64
}
