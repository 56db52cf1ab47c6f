package service

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/events"
	"github.com/kfa-project/kfa/tasks"
)

// StreamRetryAfter is the Retry-After sent when the stream limits are
// reached: streams end when tasks do, which no clock predicts.
const StreamRetryAfter = 10 * time.Second

// Stream is the events of one streaming call, in order. Read Events until
// it is closed, and always call Close (it is safe twice).
type Stream struct {
	events chan a2a.StreamResponse
	stop   chan struct{}
	once   sync.Once
	done   chan struct{} // closed when the producer has finished
}

func newStream() *Stream {
	return &Stream{events: make(chan a2a.StreamResponse, 8), stop: make(chan struct{}), done: make(chan struct{})}
}

// Events delivers the stream's events; it is closed at the end of the
// stream (a terminal state, a one-message answer, or shutdown).
func (st *Stream) Events() <-chan a2a.StreamResponse { return st.events }

// Close stops the stream and waits for its producer to finish.
func (st *Stream) Close() {
	st.once.Do(func() { close(st.stop) })
	<-st.done
}

// single is a stream of one event (a search answer over a stream).
func single(ev a2a.StreamResponse) *Stream {
	st := newStream()
	st.events <- ev
	close(st.events)
	close(st.done)
	return st
}

// SendStreamingMessage is SendMessage over a stream. A search answers with
// one Message and ends. An ask answers with its Task and then follows it:
// the status update (and the artifact) arrive the moment a qualifying
// reply or a cancel commits, and the stream ends. An ask over a stream
// needs no returnImmediately: the server holds the stream, not a request.
func (s *Service) SendStreamingMessage(ctx context.Context, c Caller, req *a2a.SendMessageRequest) (*Stream, error) {
	ans, err := s.dispatch(ctx, c, req, true)
	if err != nil {
		return nil, err
	}
	if ans.task != nil {
		return s.follow(ctx, c.Agent, *ans.task, ans.view)
	}
	return single(a2a.StreamResponse{Message: ans.message}), nil
}

// SubscribeToTask follows one of the caller's tasks: the current Task
// first, then its transition, then the end. A terminal task cannot be
// subscribed to (UnsupportedOperationError).
func (s *Service) SubscribeToTask(ctx context.Context, c Caller, id string) (*Stream, error) {
	ag, err := requireAgent(c, "SubscribeToTask")
	if err != nil {
		return nil, err
	}
	t, err := s.deps.Tasks.Get(ctx, ag.ID, id)
	if err != nil {
		return nil, s.taskError(id, err)
	}
	if t.State.Terminal() {
		return nil, a2a.Errorf(a2a.UnsupportedOperation,
			"task %s is %s; a terminal task has nothing more to stream (read it with GetTask)", t.ID, t.State).With("taskId", t.ID)
	}
	return s.follow(ctx, ag, t, tasks.FullView)
}

// follow streams t: subscribe first, then read the current state, so no
// transition can fall between the two.
func (s *Service) follow(ctx context.Context, ag *agents.Agent, t tasks.Task, view tasks.View) (*Stream, error) {
	if s.deps.Events == nil {
		return nil, a2a.Errorf(a2a.UnsupportedOperation, "streaming is not enabled on this server")
	}
	sub, err := s.deps.Events.Subscribe(t.ID, ag.ID)
	switch {
	case errors.Is(err, events.ErrTooManyStreams):
		return nil, &a2a.Error{Kind: a2a.RateLimited, RetryAfter: StreamRetryAfter,
			Message: "too many open streams for this agent or this server; close one, or poll GetTask"}
	case errors.Is(err, events.ErrClosed):
		return nil, a2a.Errorf(a2a.Unavailable, "the server is shutting down; reconnect to another instance or retry")
	case err != nil:
		return nil, err
	}
	cur, err := s.deps.Tasks.Get(ctx, ag.ID, t.ID)
	if err != nil {
		sub.Close()
		return nil, s.taskError(t.ID, err)
	}
	st := newStream()
	w := cur.Wire(view)
	st.events <- a2a.StreamResponse{Task: &w}
	if cur.State.Terminal() {
		sub.Close()
		close(st.events)
		close(st.done)
		return st, nil
	}
	go st.run(sub, cur.State)
	return st, nil
}

// run turns committed transitions into stream events until the task is
// terminal, the subscription ends, or the stream is closed.
func (st *Stream) run(sub *events.Sub, last a2a.TaskState) {
	defer close(st.done)
	defer close(st.events)
	defer sub.Close()
	for {
		select {
		case t, ok := <-sub.C():
			if !ok {
				return // shutdown, or the subscriber could not keep up
			}
			if t.State == last {
				continue
			}
			last = t.State
			for _, ev := range transitionEvents(t) {
				select {
				case st.events <- ev:
				case <-st.stop:
					return
				}
			}
			if t.State.Terminal() {
				return
			}
		case <-st.stop:
			return
		}
	}
}

// transitionEvents are the events announcing t's new state: its artifacts
// first (each complete in one chunk), then the status update.
func transitionEvents(t tasks.Task) []a2a.StreamResponse {
	var out []a2a.StreamResponse
	for _, a := range t.Artifacts {
		out = append(out, a2a.StreamResponse{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskID: t.ID, ContextID: t.ContextID, Artifact: a, LastChunk: true,
		}})
	}
	return append(out, a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskID: t.ID, ContextID: t.ContextID,
		Status: a2a.TaskStatus{State: t.State, Message: t.StatusMessage, Timestamp: a2a.FormatTime(t.StatusTime)},
	}})
}
