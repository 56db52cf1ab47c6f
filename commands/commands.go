package commands

import (
	"github.com/kfa-project/kfa/storage"
)

// Commands is every command written once, run by a store's Engine. A
// store embeds it, which makes the store the domain's Store for every
// command here.
type Commands struct{ e storage.Engine }

// New returns the commands over e.
func New(e storage.Engine) *Commands { return &Commands{e: e} }

// The commands, as a store's statistics name them (PostgreSQL counts the
// round trips of each: postgres.DB.RoundTrips).
const (
	CmdAsk           = "ask"
	CmdReply         = "reply"
	CmdCancel        = "cancel"
	CmdAck           = "ack"
	CmdPutConfig     = "push-config-put"
	CmdDeleteConfig  = "push-config-delete"
	CmdCreateSession = "session-create"
	CmdEndSession    = "session-end"
	CmdCreateAgent   = "agent-create"
	CmdRotateAgent   = "agent-rotate"
	CmdRevokeAgent   = "agent-revoke"
	// CmdLinkAgent and CmdProvisionAgent link an agent to an OAuth
	// identity, and create the agent of a new identity.
	CmdLinkAgent      = "agent-link"
	CmdProvisionAgent = "agent-provision"
	CmdAccept         = "accept"
	CmdFlag           = "flag"
	CmdModerate       = "moderate"
	CmdAttempt        = "push-attempt"
	CmdRetry          = "push-retry"
	CmdPurge          = "push-purge"
	CmdClaim          = "push-claim"
	CmdEnsureKey      = "signing-ensure"
	CmdRotateKey      = "signing-rotate"
	CmdUpsertRecords  = "records-upsert"
	CmdDeleteRecords  = "records-delete"
	// CmdRead names the reads (Engine.View).
	CmdRead = "read"
)

// one is the first of a range's records (nil for none).
func one[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}
