package service

import (
	"context"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/moderation"
)

// TestModerationScopes: flagging and accepting need a signed-in agent
// with the post scope, moderating the moderate scope; the refusal says
// which scope is missing.
func TestModerationScopes(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	reason := "spam"
	for _, tc := range []struct {
		name string
		call func() error
		want a2a.Kind
	}{
		{"anonymous flag", func() error {
			_, err := e.svc.Flag(ctx, Caller{}, FlagInput{DiscussionID: "x", Reason: &reason})
			return err
		}, a2a.Unauthenticated},
		{"reader flag", func() error {
			_, err := e.svc.Flag(ctx, Caller{Agent: e.reader}, FlagInput{DiscussionID: "x", Reason: &reason})
			return err
		}, a2a.PermissionDenied},
		{"flag without a reason", func() error {
			_, err := e.svc.Flag(ctx, Caller{Agent: e.writer}, FlagInput{DiscussionID: "x"})
			return err
		}, a2a.InvalidParams},
		{"reader accept", func() error {
			_, err := e.svc.Accept(ctx, Caller{Agent: e.reader}, "x", "y")
			return err
		}, a2a.PermissionDenied},
		{"poster moderates", func() error {
			_, err := e.svc.Moderate(ctx, Caller{Agent: e.writer}, ModerateInput{Action: moderation.ActionHide,
				Target: moderation.Target{ID: "x"}, Reason: "r"})
			return err
		}, a2a.PermissionDenied},
		{"poster reads the queue", func() error {
			_, _, err := e.svc.ModerationQueue(ctx, Caller{Agent: e.writer}, nil)
			return err
		}, a2a.PermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if got := ToError(err); got.Kind != tc.want {
				t.Fatalf("%v: %s, want %s", err, got.Kind.Name, tc.want.Name)
			}
		})
	}
}
