package service

import (
	"context"
	"errors"
	"strings"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/tasks"
	"github.com/kfa-project/kfa/trust"
)

// ToError maps any error to the A2A error a binding sends. It is the one
// place where domain errors meet the A2A error table; bindings never choose
// a status for a domain error themselves. Errors it does not know become
// InternalError with a message that reveals nothing; the caller logs the
// original with the request id.
func ToError(err error) *a2a.Error {
	return toA2A(err, "")
}

// toA2A maps err, prefixing the field of an input error with prefix unless
// it already names a message field.
func toA2A(err error, prefix string) *a2a.Error {
	if e, ok := a2a.AsError(err); ok {
		return e
	}
	var ie *input.Error
	if errors.As(err, &ie) {
		field := ie.Field
		if prefix != "" && !strings.HasPrefix(field, "message.") && !strings.HasPrefix(field, prefix) {
			field = prefix + field
		}
		return a2a.BadParam(field, "%s", ie.Msg)
	}
	var nf *discussions.NotFoundError
	if errors.As(err, &nf) {
		id := truncate(nf.ID, 64)
		return a2a.Errorf(a2a.NotFound, "discussion %s not found", id).With("discussionId", id)
	}
	var rnf *discussions.ReplyNotFoundError
	if errors.As(err, &rnf) {
		d, r := truncate(rnf.DiscussionID, 64), truncate(rnf.ReplyID, 64)
		return a2a.Errorf(a2a.NotFound, "reply %s not found on discussion %s", r, d).With("discussionId", d).With("replyId", r)
	}
	var inf *moderation.ItemNotFoundError
	if errors.As(err, &inf) {
		return a2a.Errorf(a2a.NotFound, "%s", (&moderation.ItemNotFoundError{Kind: inf.Kind, ID: truncate(inf.ID, 64)}).Error())
	}
	var pnf *peers.NotFoundError
	if errors.As(err, &pnf) {
		return a2a.Errorf(a2a.NotFound, "%s", pnf.Error()).With("peer", truncate(pnf.Name, 64))
	}
	var ce *peers.CardError
	if errors.As(err, &ce) {
		return a2a.BadParam("url", "%s", truncate(ce.Error(), 500))
	}
	var tm *discussions.TooManyRepliesError
	if errors.As(err, &tm) {
		id := truncate(tm.ID, 64)
		return a2a.Errorf(a2a.UnsupportedOperation,
			"discussion %s holds %d replies, the most one discussion takes on this server; no more replies are accepted", id, tm.Max).
			With("discussionId", id)
	}
	var se *agents.ScopeError
	if errors.As(err, &se) {
		return a2a.Errorf(a2a.PermissionDenied, "%s", se.Error()).With("agentId", se.Agent.ID).With("scope", string(se.Need))
	}
	var dup *agents.DuplicateNameError
	if errors.As(err, &dup) {
		return a2a.BadParam("name", "%s", dup.Error())
	}
	var lc *agents.LinkConflictError
	if errors.As(err, &lc) {
		return a2a.Errorf(a2a.UnsupportedOperation, "%s", lc.Error())
	}
	var rl *ratelimit.Exceeded
	if errors.As(err, &rl) {
		return &a2a.Error{Kind: a2a.RateLimited, Message: rl.Msg, RetryAfter: rl.RetryAfter}
	}
	switch {
	case errors.Is(err, peers.ErrExists):
		return a2a.BadParam("name", "a peer has this name already; remove it first, or choose another name")
	case errors.Is(err, peers.ErrTooManyPeers):
		return a2a.Errorf(a2a.UnsupportedOperation, "this server keeps at most %d peers", peers.MaxPeers)
	case errors.Is(err, peers.ErrNoDocument):
		return a2a.Errorf(a2a.NotFound, "no followed document has this id")
	case errors.Is(err, peers.ErrCursorExpired):
		return a2a.Errorf(a2a.CursorExpired, "%s", err.Error())
	case errors.Is(err, tasks.ErrNotFound):
		return a2a.Errorf(a2a.TaskNotFound, "task not found")
	case errors.Is(err, tasks.ErrNotCancelable):
		return a2a.Errorf(a2a.TaskNotCancelable, "task is completed and cannot be canceled")
	case errors.Is(err, discussions.ErrNotFound):
		return a2a.Errorf(a2a.NotFound, "discussion not found")
	case errors.Is(err, discussions.ErrNotAsker):
		return a2a.Errorf(a2a.NotAsker, "only the asker of the discussion can accept a reply")
	case errors.Is(err, discussions.ErrAcceptOwn):
		return a2a.BadParam("replyId", "is the asker's own reply; the accepted answer is a reply by someone else")
	case errors.Is(err, moderation.ErrOwnContent):
		return a2a.Errorf(a2a.OwnContent, "agents cannot flag their own discussions or replies")
	case errors.Is(err, trust.ErrOwnContent):
		return a2a.Errorf(a2a.OwnContent, "agents cannot vote on or verify their own answers")
	case errors.Is(err, discussions.ErrAnswered):
		return a2a.Errorf(a2a.UnsupportedOperation, "discussion is already answered")
	case errors.Is(err, agents.ErrInvalidToken):
		return a2a.Errorf(a2a.Unauthenticated, "invalid, expired or revoked bearer token")
	case errors.Is(err, agents.ErrNotFound):
		return a2a.Errorf(a2a.NotFound, "agent not found")
	case errors.Is(err, knowledge.ErrNotFound):
		return a2a.Errorf(a2a.NotFound, "record not found")
	case errors.Is(err, agents.ErrDisabled):
		return a2a.Errorf(a2a.UnsupportedOperation, "%s", "agent is revoked, and stays revoked: its tokens never work again. "+
			"Create a new agent (kfa agent create); to give it the OAuth identity of the revoked one, "+
			"kfa agent link NEW_ID --issuer URL --subject SUB --replace")
	case errors.Is(err, agents.ErrNotLinked):
		return a2a.Errorf(a2a.Unauthenticated, "%s", err.Error())
	case errors.Is(err, agents.ErrInvalidName), errors.Is(err, agents.ErrInvalidScope), errors.Is(err, agents.ErrInvalidIdentity):
		return a2a.Errorf(a2a.InvalidParams, "%s", err.Error())
	case isCommitUnknown(err):
		return a2a.Errorf(a2a.Unavailable, "%s", CommitUnknownMessage)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return a2a.Errorf(a2a.Unavailable, "request canceled or timed out")
	case writesRefused(err) != "":
		return a2a.Errorf(a2a.Unavailable, "writes are refused until a synchronous standby is back (%s); retry shortly", writesRefused(err))
	case isUnavailable(err):
		return a2a.Errorf(a2a.Unavailable, "the database is not answering; retry shortly")
	}
	return a2a.Errorf(a2a.Internal, "internal error; the server log has the details under this request's id")
}

// isUnavailable tells whether err says that the store cannot be reached
// for now (a store marks such errors with an Unavailable method; the
// PostgreSQL store does when the database does not answer).
func isUnavailable(err error) bool {
	var u interface{ Unavailable() bool }
	return errors.As(err, &u) && u.Unavailable()
}

// CommitUnknownMessage is what a client is told of a write whose commit
// the database never confirmed (it went away while committing, as in a
// failover): the write may be stored or not.
const CommitUnknownMessage = "the database went away while this write was committing: it may or may not have been stored. " +
	"Retry an ask with the same messageId (it is idempotent); read before you send anything else again"

// isCommitUnknown tells whether err is a write whose outcome is unknown (a
// store marks such errors with a CommitUnknown method).
func isCommitUnknown(err error) bool {
	var u interface{ CommitUnknown() bool }
	return errors.As(err, &u) && u.CommitUnknown()
}

// writesRefused is why the store refuses writes for now (a store marks
// such errors with a WritesRefused method: the PostgreSQL store's
// --require-sync-replica), "" for another error.
func writesRefused(err error) string {
	var r interface{ WritesRefused() string }
	if errors.As(err, &r) {
		return r.WritesRefused()
	}
	return ""
}

func isErr(err, target error) bool { return errors.Is(err, target) }

func isNotFound(err error) bool { return errors.Is(err, tasks.ErrNotFound) }
