package service

import (
	"context"

	"github.com/kfa-project/kfa/a2a"
)

// SendMessage runs one A2A SendMessage: the message picks a skill of the
// registry (input.go), the caller must hold the skill's scope, and the
// skill answers with a direct Message (knowledge-search) or a Task
// (ask-network).
func (s *Service) SendMessage(ctx context.Context, c Caller, req *a2a.SendMessageRequest) (a2a.SendMessageResponse, error) {
	ans, err := s.dispatch(ctx, c, req, false)
	if err != nil {
		return a2a.SendMessageResponse{}, err
	}
	if ans.task != nil {
		w := ans.task.Wire(ans.view)
		return a2a.SendMessageResponse{Task: &w}, nil
	}
	return a2a.SendMessageResponse{Message: ans.message}, nil
}

// dispatch reads req, picks its skill and runs it for c. streaming says
// whether the answer goes out on a stream.
func (s *Service) dispatch(ctx context.Context, c Caller, req *a2a.SendMessageRequest, streaming bool) (answer, error) {
	if req == nil || req.Message == nil {
		return answer{}, a2a.BadParam("message", "is required")
	}
	if err := validateMessage(req.Message); err != nil {
		return answer{}, err
	}
	if req.Message.TaskID != "" {
		return answer{}, s.messageToTask(ctx, c, req.Message.TaskID)
	}
	in, err := s.readInput(req)
	if err != nil {
		return answer{}, err
	}
	sk := s.skills.byID[in.skill]
	if err := authorize(c, sk); err != nil {
		return answer{}, err
	}
	return sk.run(s, ctx, c, req, in, streaming)
}

// messageToTask answers a message that names a task. kfa tasks take no
// follow-up messages: details go on the public discussion.
func (s *Service) messageToTask(ctx context.Context, c Caller, taskID string) error {
	if c.Agent == nil {
		return taskNotFound(taskID)
	}
	t, err := s.deps.Tasks.Get(ctx, c.Agent.ID, taskID)
	if err != nil {
		return s.taskError(taskID, err)
	}
	if t.State.Terminal() {
		return a2a.Errorf(a2a.UnsupportedOperation,
			"task %s is %s; a terminal task accepts no messages (ask again in a new task, reusing its contextId)", t.ID, t.State).
			With("taskId", t.ID)
	}
	return a2a.Errorf(a2a.UnsupportedOperation,
		"task %s takes no follow-up messages; add details as a reply on its discussion: POST %s/api/v1/discussions/%s/replies",
		t.ID, s.cfg.PublicURL, t.DiscussionID).With("taskId", t.ID)
}
