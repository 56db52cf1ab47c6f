package push

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/pagetoken"
)

// Page sizes of a config listing.
const (
	DefaultPageSize = MaxConfigsPerTask
	MaxPageSize     = 100
)

// Service applies the config rules over a ConfigStore: validation against
// the destination policy, ownership, the bound per task.
type Service struct {
	store  ConfigStore
	policy Policy
	tokens pagetoken.Codec
	now    func() time.Time
}

// NewService returns a Service. secret keys page tokens.
func NewService(store ConfigStore, policy Policy, secret []byte, now func() time.Time) *Service {
	return &Service{store: store, policy: policy, tokens: pagetoken.New(secret), now: now}
}

// Policy is the destination policy configs are checked against.
func (s *Service) Policy() Policy { return s.policy }

// Validate checks a config sent inline with an ask, naming bad fields
// under field; the ask stores it with the task.
func (s *Service) Validate(in a2a.TaskPushNotificationConfig, field string) (Config, error) {
	return NewConfig(in, s.policy, field, s.now())
}

// Create adds (or, for an id the task has, replaces) a config on
// ownerID's task.
func (s *Service) Create(ctx context.Context, ownerID, taskID string, in a2a.TaskPushNotificationConfig) (Config, error) {
	if in.TaskID != "" && in.TaskID != taskID {
		return Config{}, input.Errorf("taskId", "names task %q, but the request is for task %q", trunc(in.TaskID), trunc(taskID))
	}
	c, err := NewConfig(in, s.policy, "", s.now())
	if err != nil {
		return Config{}, err
	}
	c.TaskID, c.OwnerID = taskID, ownerID
	stored, _, err := s.store.PutPushConfig(ctx, c, MaxConfigsPerTask)
	return stored, err
}

// Get returns one config of ownerID's task.
func (s *Service) Get(ctx context.Context, ownerID, taskID, id string) (Config, error) {
	all, err := s.store.PushConfigs(ctx, ownerID, taskID)
	if err != nil {
		return Config{}, err
	}
	for _, c := range all {
		if c.ID == id {
			return c, nil
		}
	}
	return Config{}, ErrNotFound
}

// List returns one page of ownerID's task's configs, in id order, and
// the token of the next page ("" on the last); DefaultPageSize configs
// when pageSize is nil.
func (s *Service) List(ctx context.Context, ownerID, taskID string, asked *int, pageToken string) ([]Config, string, error) {
	pageSize, err := input.PageSize(asked, DefaultPageSize, MaxPageSize)
	if err != nil {
		return nil, "", err
	}
	binding := "pushconfigs|" + ownerID + "|" + taskID
	var after string
	if pageToken != "" {
		raw, err := s.tokens.Decode(binding, pageToken)
		if err != nil {
			return nil, "", pagetoken.ErrInvalid
		}
		after = string(raw)
	}
	all, err := s.store.PushConfigs(ctx, ownerID, taskID)
	if err != nil {
		return nil, "", err
	}
	out := make([]Config, 0, min(len(all), pageSize))
	for _, c := range all {
		if after != "" && c.ID <= after {
			continue
		}
		if len(out) == pageSize {
			return out, s.tokens.Encode(binding, []byte(out[len(out)-1].ID)), nil
		}
		out = append(out, c)
	}
	return out, "", nil
}

// Delete removes a config of ownerID's task; deleting one the task does
// not have is no error.
func (s *Service) Delete(ctx context.Context, ownerID, taskID, id string) error {
	_, err := s.store.DeletePushConfig(ctx, ownerID, taskID, id, s.now().UTC().Truncate(time.Millisecond))
	return err
}

func trunc(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
