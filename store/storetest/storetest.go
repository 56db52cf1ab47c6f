// Package storetest is the behaviour every kfa store must have, written
// once and run against each backend (bbolt and PostgreSQL), like a driver
// conformance suite. It drives the stores through the domain services, so
// it tests the rules and their atomicity together; RunConcurrent races
// callers on two handles of one store (two processes on PostgreSQL)
// against every limit a store decides under a lock.
package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	peerdom "github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/tasks"
	"github.com/kfa-project/kfa/trust"
)

// Store is everything a kfa backend implements.
type Store interface {
	agents.Store
	tasks.Store
	discussions.Store
	moderation.Store
	sessions.Store
	push.ConfigStore
	push.OutboxStore
	signing.Store
	peerdom.Store
	trust.Store
	changelog.Log
	storage.Engine
}

// Opener returns a fresh, empty store for one test; it registers its own
// cleanup with t.
type Opener func(t *testing.T) Store

// Run runs the whole suite.
func Run(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"Agents", testAgents},
		{"RotateGrace", testRotateGrace},
		{"Identities", testIdentities},
		{"IdentityReplace", testIdentityReplace},
		{"Ask", testAsk},
		{"AskJoin", testAskJoin},
		{"MaxOpen", testMaxOpen},
		{"Cancel", testCancel},
		{"ReplyCompletes", testReplyCompletes},
		{"ReplyByAuthor", testReplyByAuthor},
		{"ReplyUnknownDiscussion", testReplyUnknownDiscussion},
		{"LaterReplyCompletesJoined", testLaterReplyCompletesJoined},
		{"Inbox", testInbox},
		{"StatusTimestampOnlyMovesOnTransitions", testStatusTimestamp},
		{"ListTasksWalk", testListTasksWalk},
		{"ListTasksSinceInclusive", testListSinceInclusive},
		{"ListDiscussions", testListDiscussions},
		{"ReplyRacesCancel", testReplyRacesCancel},
		{"ReplyRacesCancelAndJoin", testReplyRacesCancelAndJoin},
		{"Snapshots", testSnapshots},
		{"ReadsByOwner", testReadsByOwner},
		{"Sessions", testSessions},
		{"SessionsEnd", testSessionsEnd},
		{"SessionsPurge", testSessionsPurge},
		{"SessionsOAuth", testSessionsOAuth},
		{"AskRateIsStored", testAskRateIsStored},
		{"ReplyLimits", testReplyLimits},
		{"Usage", testUsage},
		{"RepliesPaginated", testRepliesPaginated},
		{"Threads", testThreads},
		{"ReplyAfterManyFinishedTasks", testReplyAfterManyFinishedTasks},
		{"PushConfigs", testPushConfigs},
		{"PushOutbox", testPushOutbox},
		{"PushCancel", testPushCancel},
		{"PushDueByDestination", testPushDueByDestination},
		{"SigningKeys", testSigningKeys},
		{"ChangeLog", testChangeLog},
		{"ChangeLogTrim", testChangeLogTrim},
		{"FlagOnce", testFlagOnce},
		{"FlagRefusals", testFlagRefusals},
		{"FlagThreshold", testFlagThreshold},
		{"HideUnhide", testHideUnhide},
		{"Accept", testAccept},
		{"HideAuthor", testHideAuthor},
		{"ListOldest", testListOldest},
		{"Peers", testPeers},
		{"Forwards", testForwards},
		{"VoteOnce", testVoteOnce},
		{"SignalRefusals", testSignalRefusals},
		{"SignalRate", testSignalRate},
		{"VerifyOnce", testVerifyOnce},
		{"RecordSignals", testRecordSignals},
		{"Reputation", testReputation},
		{"Profile", testProfile},
		{"Engine", testEngine},
		{"EngineUnder", testEngineUnder},
		{"RevokedAgentCommitsNothing", testRevokedAgentCommitsNothing},
		{"AnsweredAtTheEarliestReply", testAnsweredAtTheEarliestReply},
		{"OnlyAnswerHidden", testOnlyAnswerHidden},
		{"AnswerMovesByID", testAnswerMovesByID},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

// Clock is a settable clock for the services.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts at a fixed, millisecond-aligned time.
func NewClock() *Clock {
	return &Clock{t: time.Date(2026, 12, 2, 10, 30, 0, 0, time.UTC)}
}

// Now returns the current fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a store with services over it.
type env struct {
	store Store
	clock *Clock
	ag    *agents.Service
	tk    *tasks.Service
	ds    *discussions.Service
}

func newEnv(t *testing.T, open Opener, limits tasks.Limits) *env {
	t.Helper()
	return newEnvLimits(t, open, limits, discussions.Limits{})
}

// newEnvLimits is newEnv with reply limits too.
func newEnvLimits(t *testing.T, open Opener, limits tasks.Limits, replyLimits discussions.Limits) *env {
	t.Helper()
	s := open(t)
	c := NewClock()
	return &env{
		store: s, clock: c,
		ag: agents.NewService(s, c.Now),
		tk: tasks.NewService(s, limits, []byte(envSecret), c.Now),
		ds: discussions.NewService(s, replyLimits, []byte(envSecret), c.Now),
	}
}

const envSecret = "storetest-secret"

func (e *env) agent(t *testing.T, name string) agents.Agent {
	t.Helper()
	c, err := e.ag.Create(context.Background(), name, []agents.Scope{agents.ScopeRead, agents.ScopePost})
	if err != nil {
		t.Fatalf("create agent %s: %v", name, err)
	}
	return c.Agent
}

func askInput(a agents.Agent, msgID, question string) tasks.AskInput {
	text := question
	return tasks.AskInput{
		Asker:    tasks.Asker{ID: a.ID, Name: a.Name},
		Message:  a2a.Message{MessageID: msgID, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}},
		Question: question,
	}
}

func (e *env) ask(t *testing.T, a agents.Agent, msgID string) tasks.Task {
	t.Helper()
	tk, created, err := e.tk.Ask(context.Background(), askInput(a, msgID, "question "+msgID))
	if err != nil {
		t.Fatalf("ask %s: %v", msgID, err)
	}
	if !created {
		t.Fatalf("ask %s: not created", msgID)
	}
	return tk
}

func (e *env) join(t *testing.T, a agents.Agent, msgID, discID string) tasks.Task {
	t.Helper()
	in := askInput(a, msgID, "")
	in.JoinDiscussionID = discID
	tk, _, err := e.tk.Ask(context.Background(), in)
	if err != nil {
		t.Fatalf("join %s: %v", discID, err)
	}
	return tk
}

func (e *env) reply(t *testing.T, a agents.Agent, discID, body string) discussions.ReplyResult {
	t.Helper()
	r, err := e.ds.Reply(context.Background(), discussions.Author{ID: a.ID, Name: a.Name}, discID, body)
	if err != nil {
		t.Fatalf("reply on %s: %v", discID, err)
	}
	return r
}

func (e *env) task(t *testing.T, id string) tasks.Task {
	t.Helper()
	tk, err := e.store.GetTask(context.Background(), "", id)
	if err != nil {
		t.Fatalf("get task %s: %v", id, err)
	}
	return tk
}

func mustState(t *testing.T, tk tasks.Task, want a2a.TaskState) {
	t.Helper()
	if tk.State != want {
		t.Fatalf("task %s: state %s, want %s", tk.ID, tk.State, want)
	}
}

func errIs(t *testing.T, err, want error, what string) {
	t.Helper()
	if err == nil || !isErr(err, want) {
		t.Fatalf("%s: err = %v, want %v", what, err, want)
	}
}

func ids(ts []tasks.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func eqStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func describe(ts []tasks.Task) string {
	s := ""
	for _, t := range ts {
		s += fmt.Sprintf("%s@%s ", t.ID, t.StatusTime.Format(a2a.TimeLayout))
	}
	return s
}
