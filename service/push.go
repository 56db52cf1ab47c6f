package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/push"
)

// The push notification config methods. A task's configs are its
// owner's: another agent's task answers as a missing one, byte for byte.

// pushInlineField names the inline config's fields in errors.
const pushInlineField = "configuration.taskPushNotificationConfig."

// pushOwner checks the caller and that push notifications are on.
func (s *Service) pushOwner(c Caller, taskID string) (string, error) {
	ag, err := requireAgent(c, "push notification configs")
	if err != nil {
		return "", err
	}
	if s.deps.Push == nil {
		return "", a2a.Errorf(a2a.PushNotificationNotSupp,
			"push notifications are off on this server (capabilities.pushNotifications is false); use SubscribeToTask or poll GetTask")
	}
	if taskID == "" {
		return "", a2a.BadParam("taskId", "is required")
	}
	return ag.ID, nil
}

// pushError maps the config errors that name a task or a config.
func (s *Service) pushError(taskID, configID string, err error) error {
	switch {
	case errors.Is(err, push.ErrTaskNotFound):
		return taskNotFound(taskID)
	case errors.Is(err, push.ErrNotFound):
		return a2a.Errorf(a2a.TaskNotFound, "push notification config %s not found on task %s", truncate(configID, 64), taskID).
			With("taskId", taskID).With("configId", truncate(configID, 64))
	case errors.Is(err, push.ErrTaskTerminal):
		return a2a.Errorf(a2a.UnsupportedOperation,
			"task %s is in a terminal state and will not change again: a push notification config would never be used; read it with GetTask", taskID).
			With("taskId", taskID)
	case errors.Is(err, push.ErrTooManyConfigs):
		return a2a.Errorf(a2a.InvalidParams, "%s", err.Error()).With("taskId", taskID)
	}
	return err
}

// CreatePushConfig adds a push notification config to the caller's task
// (or replaces the one with the same id).
func (s *Service) CreatePushConfig(ctx context.Context, c Caller, taskID string, in a2a.TaskPushNotificationConfig) (a2a.TaskPushNotificationConfig, error) {
	owner, err := s.pushOwner(c, taskID)
	if err != nil {
		return a2a.TaskPushNotificationConfig{}, err
	}
	cfg, err := s.deps.Push.Create(ctx, owner, taskID, in)
	if err != nil {
		return a2a.TaskPushNotificationConfig{}, s.pushError(taskID, in.ID, err)
	}
	return cfg.Wire(), nil
}

// GetPushConfig returns one config of the caller's task.
func (s *Service) GetPushConfig(ctx context.Context, c Caller, taskID, id string) (a2a.TaskPushNotificationConfig, error) {
	owner, err := s.pushOwner(c, taskID)
	if err != nil {
		return a2a.TaskPushNotificationConfig{}, err
	}
	if id == "" {
		return a2a.TaskPushNotificationConfig{}, a2a.BadParam("id", "is required")
	}
	cfg, err := s.deps.Push.Get(ctx, owner, taskID, id)
	if err != nil {
		return a2a.TaskPushNotificationConfig{}, s.pushError(taskID, id, err)
	}
	return cfg.Wire(), nil
}

// ListPushConfigs returns one page of the caller's task's configs.
func (s *Service) ListPushConfigs(ctx context.Context, c Caller, taskID string, pageSize *int, pageToken string) (a2a.ListTaskPushNotificationConfigsResponse, error) {
	owner, err := s.pushOwner(c, taskID)
	if err != nil {
		return a2a.ListTaskPushNotificationConfigsResponse{}, err
	}
	list, next, err := s.deps.Push.List(ctx, owner, taskID, pageSize, pageToken)
	if err != nil {
		return a2a.ListTaskPushNotificationConfigsResponse{}, s.pushError(taskID, "", err)
	}
	out := a2a.ListTaskPushNotificationConfigsResponse{Configs: make([]a2a.TaskPushNotificationConfig, len(list)), NextPageToken: next}
	for i, cfg := range list {
		out.Configs[i] = cfg.Wire()
	}
	return out, nil
}

// DeletePushConfig deletes one config of the caller's task; a config the
// task does not have is already deleted.
func (s *Service) DeletePushConfig(ctx context.Context, c Caller, taskID, id string) error {
	owner, err := s.pushOwner(c, taskID)
	if err != nil {
		return err
	}
	if id == "" {
		return a2a.BadParam("id", "is required")
	}
	return s.pushError(taskID, id, s.deps.Push.Delete(ctx, owner, taskID, id))
}

// inlinePush reads configuration.taskPushNotificationConfig of an ask:
// nil when there is none.
func (s *Service) inlinePush(cfg *a2a.SendMessageConfiguration) (*push.Config, error) {
	if cfg == nil {
		return nil, nil
	}
	raw := bytes.TrimSpace(cfg.TaskPushNotificationConfig)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if s.deps.Push == nil {
		return nil, a2a.Errorf(a2a.PushNotificationNotSupp,
			"push notifications are off on this server (capabilities.pushNotifications is false); leave out configuration.taskPushNotificationConfig")
	}
	var in a2a.TaskPushNotificationConfig
	if a2a.IsObject(raw) {
		if err := a2a.CheckFields(raw, &in); err != nil {
			return nil, a2a.AsParam(err, pushInlineField)
		}
	}
	if !a2a.IsObject(raw) || json.Unmarshal(raw, &in) != nil {
		return nil, a2a.BadParam(pushInlineField[:len(pushInlineField)-1], "must be an object {url, token?, authentication?: {scheme, credentials?}}")
	}
	p, err := s.deps.Push.Validate(in, pushInlineField)
	if err != nil {
		return nil, err
	}
	return &p, nil
}
