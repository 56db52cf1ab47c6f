package service

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/kfa-project/kfa/tasks"
)

// The JSON answers below are what GetTask and ListTasks answer, as bytes
// ready to write: each task is its wire JSON as stored when the task was
// last written (tasks.WireJSON), so showing a task decodes and encodes
// nothing. They are byte for byte what encoding/json makes of the
// a2a.Task and a2a.ListTasksResponse that GetTask and ListTasks return.

// GetTaskJSON is GetTask answered as the JSON of the a2a.Task, appended
// to dst.
func (s *Service) GetTaskJSON(ctx context.Context, c Caller, id string, historyLength *int, dst []byte) ([]byte, error) {
	ag, err := requireAgent(c, "GetTask")
	if err != nil {
		return nil, err
	}
	if err := checkHistoryLength(historyLength); err != nil {
		return nil, err
	}
	view := tasks.View{HistoryLength: historyLength, IncludeArtifacts: true}
	err = s.deps.Tasks.ViewTask(ctx, ag.ID, id, func(t *tasks.Snapshot) error {
		dst = t.Wire.Append(dst, view)
		return nil
	})
	if err != nil {
		return nil, s.taskError(id, err)
	}
	return dst, nil
}

// ListTasksJSON is ListTasks answered as the JSON of the
// a2a.ListTasksResponse, appended to dst.
func (s *Service) ListTasksJSON(ctx context.Context, c Caller, req ListTasksRequest, dst []byte) ([]byte, error) {
	ag, p, view, err := s.listParams(c, req)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `{"tasks":[`...)
	first := true
	info, err := s.deps.Tasks.ViewList(ctx, ag.ID, p, view, func(t *tasks.Snapshot) error {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = t.Wire.Append(dst, view)
		return nil
	})
	if err != nil {
		return nil, err
	}
	dst = append(dst, `],"nextPageToken":`...)
	tok, err := json.Marshal(info.NextPageToken)
	if err != nil {
		return nil, err
	}
	dst = append(dst, tok...)
	dst = append(dst, `,"pageSize":`...)
	dst = strconv.AppendInt(dst, int64(info.PageSize), 10)
	dst = append(dst, `,"totalSize":`...)
	dst = strconv.AppendInt(dst, int64(info.TotalSize), 10)
	return append(dst, '}'), nil
}
