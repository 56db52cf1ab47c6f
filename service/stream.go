package service

import (
	"context"
	"errors"
	"strconv"
	"strings"
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
	events chan Event
	stop   chan struct{}
	once   sync.Once
	done   chan struct{} // closed when the producer has finished
}

// Event is one event of a stream and its id (the SSE id: field). A
// task's events have ids that are the same on every stream of the task:
// "<taskId>.<n>", n counting the task's events from 1 (its WORKING
// snapshot), then its transition's artifact updates and status update.
// A client that reconnects with the last id it got (Last-Event-ID) is
// sent only the events after it.
type Event struct {
	ID   string
	Resp a2a.StreamResponse
}

func newStream() *Stream {
	return &Stream{events: make(chan Event, 8), stop: make(chan struct{}), done: make(chan struct{})}
}

// Events delivers the stream's events; it is closed at the end of the
// stream (a terminal state, a one-message answer, or shutdown).
func (st *Stream) Events() <-chan Event { return st.events }

// Close stops the stream and waits for its producer to finish.
func (st *Stream) Close() {
	st.once.Do(func() { close(st.stop) })
	<-st.done
}

// fixed is a stream of the given events, then its end.
func fixed(evs ...Event) *Stream {
	st := &Stream{events: make(chan Event, len(evs)), stop: make(chan struct{}), done: make(chan struct{})}
	for _, ev := range evs {
		st.events <- ev
	}
	close(st.events)
	close(st.done)
	return st
}

// eventID is the id of a task's n'th event.
func eventID(taskID string, n int) string { return taskID + "." + strconv.Itoa(n) }

// resumeAfter reads a Last-Event-ID: how many of the task's events the
// client has had. An id of another task, or none, is 0.
func resumeAfter(taskID, lastEventID string) int {
	id, n, ok := strings.Cut(strings.TrimSpace(lastEventID), ".")
	if !ok || id != taskID {
		return 0
	}
	k, err := strconv.Atoi(n)
	if err != nil || k < 0 {
		return 0
	}
	return k
}

// SendStreamingMessage is SendMessage over a stream. A search answers with
// one Message and ends. An ask answers with its Task and then follows it:
// the status update (and the artifact) arrive the moment a qualifying
// reply or a cancel commits, and the stream ends. An ask over a stream
// needs no returnImmediately: the server holds the stream, not a request.
// lastEventID, when it names the task (a client reconnecting with the
// same messageId), resumes after that event.
func (s *Service) SendStreamingMessage(ctx context.Context, c Caller, req *a2a.SendMessageRequest, lastEventID string) (*Stream, error) {
	ans, err := s.dispatch(ctx, c, req, true)
	if err != nil {
		return nil, err
	}
	if ans.task != nil {
		return s.follow(ctx, c.Agent, *ans.task, ans.view, resumeAfter(ans.task.ID, lastEventID))
	}
	return fixed(Event{ID: ans.message.MessageID, Resp: a2a.StreamResponse{Message: ans.message}}), nil
}

// SubscribeToTask follows one of the caller's tasks: the current Task
// first, then its transition, then the end. A terminal task cannot be
// subscribed to (UnsupportedOperationError), unless lastEventID names one
// of its events: a client reconnecting after it missed the transition
// gets the events it has not had.
func (s *Service) SubscribeToTask(ctx context.Context, c Caller, id, lastEventID string) (*Stream, error) {
	ag, err := requireAgent(c, "SubscribeToTask")
	if err != nil {
		return nil, err
	}
	t, err := s.deps.Tasks.Get(ctx, ag.ID, id)
	if err != nil {
		return nil, s.taskError(id, err)
	}
	from := resumeAfter(t.ID, lastEventID)
	if t.State.Terminal() && from == 0 {
		return nil, a2a.Errorf(a2a.UnsupportedOperation,
			"task %s is %s; a terminal task has nothing more to stream (read it with GetTask)", t.ID, t.State).With("taskId", t.ID)
	}
	return s.follow(ctx, ag, t, tasks.FullView, from)
}

// follow streams t after its first from events: subscribe first, then
// read the current state, so no transition can fall between the two.
func (s *Service) follow(ctx context.Context, ag *agents.Agent, t tasks.Task, view tasks.View, from int) (*Stream, error) {
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
	if cur.State.Terminal() {
		sub.Close()
		evs := transitionEvents(cur)
		if from == 0 {
			// Everything at once: the task as it ended, which stands for
			// every event up to its last.
			w := cur.Wire(view)
			return fixed(Event{ID: eventID(cur.ID, len(evs)+1), Resp: a2a.StreamResponse{Task: &w}}), nil
		}
		return fixed(evs[min(from-1, len(evs)):]...), nil
	}
	st := newStream()
	if from < 1 {
		w := cur.Wire(view)
		st.events <- Event{ID: eventID(cur.ID, 1), Resp: a2a.StreamResponse{Task: &w}}
	}
	go st.run(sub, cur.State, from)
	return st, nil
}

// run turns committed transitions into stream events until the task is
// terminal, the subscription ends, or the stream is closed. The first
// from events of the task were had before.
func (st *Stream) run(sub *events.Sub, last a2a.TaskState, from int) {
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
			evs := transitionEvents(t)
			for _, ev := range evs[min(max(from-1, 0), len(evs)):] {
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

// transitionEvents are the events announcing t's new state, the task's
// events 2 and on: its artifacts first (each complete in one chunk), then
// the status update.
func transitionEvents(t tasks.Task) []Event {
	var out []Event
	for _, a := range t.Artifacts {
		out = append(out, Event{ID: eventID(t.ID, len(out)+2), Resp: a2a.StreamResponse{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskID: t.ID, ContextID: t.ContextID, Artifact: a, LastChunk: true,
		}}})
	}
	return append(out, Event{ID: eventID(t.ID, len(out)+2), Resp: a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskID: t.ID, ContextID: t.ContextID,
		Status: a2a.TaskStatus{State: t.State, Message: t.StatusMessage, Timestamp: a2a.FormatTime(t.StatusTime)},
	}}})
}
