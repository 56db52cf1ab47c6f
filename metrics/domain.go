package metrics

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

// WrapTasks returns s counting the asks that create a task and the
// cancels that change one. Counting at the store sees exactly what
// committed, whoever called (a binding or the operator).
func (m *Metrics) WrapTasks(s tasks.Store) tasks.Store { return &taskStore{Store: s, m: m} }

// WrapDiscussions returns s counting stored replies and the tasks they
// completed.
func (m *Metrics) WrapDiscussions(s discussions.Store) discussions.Store {
	return &discussionStore{Store: s, m: m}
}

type taskStore struct {
	tasks.Store
	m *Metrics
}

func (s *taskStore) CreateAsk(ctx context.Context, c tasks.CreateAsk) (tasks.AskResult, error) {
	res, err := s.Store.CreateAsk(ctx, c)
	if err == nil && res.Created {
		s.m.asks.Inc()
	}
	return res, err
}

func (s *taskStore) CancelTask(ctx context.Context, ownerID, id string, at time.Time) (tasks.Task, bool, error) {
	t, changed, err := s.Store.CancelTask(ctx, ownerID, id, at)
	if err == nil && changed {
		s.m.cancels.Inc()
	}
	return t, changed, err
}

type discussionStore struct {
	discussions.Store
	m *Metrics
}

func (s *discussionStore) AddReply(ctx context.Context, r discussions.Reply, lim discussions.Limits) (discussions.ReplyResult, error) {
	res, err := s.Store.AddReply(ctx, r, lim)
	if err == nil {
		q := "false"
		if res.Qualifying {
			q = "true"
		}
		s.m.replies.WithLabelValues(q).Inc()
		s.m.completions.Add(float64(len(res.CompletedTaskIDs)))
	}
	return res, err
}
