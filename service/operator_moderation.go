package service

import (
	"context"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/peers"
)

// The operator's moderation (kfa moderation, kfa agent revoke
// --hide-content): every action is the operator's in the moderation log,
// under the name the request gives.

func operatorActor(by string) moderation.Actor {
	return moderation.Actor{Kind: moderation.ActorOperator, Name: by}
}

func (o *Operator) moderation() (*moderation.Service, error) {
	if o.d.Moderation == nil {
		return nil, a2a.Errorf(a2a.Unavailable, "moderation is not set up in this process")
	}
	return o.d.Moderation, nil
}

// ModerationQueue is the review queue, most flagged first (limit nil:
// the default), and how many items wait.
func (o *Operator) ModerationQueue(ctx context.Context, limit *int) ([]moderation.QueueEntry, int, error) {
	m, err := o.moderation()
	if err != nil {
		return nil, 0, err
	}
	return m.Queue(ctx, limit)
}

// ModerationLog is one page of the moderation log, newest first.
func (o *Operator) ModerationLog(ctx context.Context, pageSize *int, pageToken string) (moderation.LogPage, error) {
	m, err := o.moderation()
	if err != nil {
		return moderation.LogPage{}, err
	}
	return m.Log(ctx, pageSize, pageToken)
}

// Moderate runs action (hide, unhide or dismiss) on the item req names.
func (o *Operator) Moderate(ctx context.Context, action moderation.Action, req api.ModerationRequest) (moderation.Result, error) {
	m, err := o.moderation()
	if err != nil {
		return moderation.Result{}, err
	}
	if req.ID == "" {
		return moderation.Result{}, a2a.BadParam("id", "is required: the discussion's or the reply's id")
	}
	t, actor := moderation.Target{Kind: moderation.Kind(req.Kind), ID: req.ID}, operatorActor(req.By)
	if t.Kind == moderation.KindDocument || t.Kind == "" && peers.IsDocumentKey(t.ID) {
		// A document followed from a peer: hidden here, by the peers'
		// decision, into the same log.
		if o.d.Peers == nil {
			return moderation.Result{}, errNoPeers
		}
		return o.d.Peers.Moderate(ctx, action, actor, t.ID, req.Reason)
	}
	switch action {
	case moderation.ActionHide:
		return m.Hide(ctx, actor, t, req.Reason)
	case moderation.ActionUnhide:
		return m.Unhide(ctx, actor, t, req.Reason)
	case moderation.ActionDismiss:
		return m.Dismiss(ctx, actor, t, req.Reason)
	}
	return moderation.Result{}, a2a.BadParam("action", "must be hide, unhide or dismiss")
}

// HideAgentContent hides every discussion and reply agent id wrote.
func (o *Operator) HideAgentContent(ctx context.Context, id string, req api.HideAuthorRequest) (moderation.AuthorResult, error) {
	m, err := o.moderation()
	if err != nil {
		return moderation.AuthorResult{}, err
	}
	if _, err := o.Agent(ctx, id); err != nil {
		return moderation.AuthorResult{}, err
	}
	return m.HideAuthor(ctx, id, operatorActor(req.By), req.Reason)
}
