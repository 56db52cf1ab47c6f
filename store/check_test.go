package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(7 * time.Millisecond)
	return c.t
}

// world is a store with every kind of record in it, written through the
// domain services: the state check must find flawless.
type world struct {
	db                 *DB
	alice, bob, carol  agents.Agent
	waiting, completed tasks.Task // alice's
	canceled           tasks.Task // bob's
	joined             tasks.Task // carol's, completed with alice's
	disc               string     // the answered discussion
}

func newWorld(t *testing.T) *world {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), FileName), Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	clk := &fakeClock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	ag := agents.NewService(db, clk.now)
	tk := tasks.NewService(db, tasks.Limits{}, db.Secret(), clk.now)
	ds := discussions.NewService(db, discussions.Limits{}, db.Secret(), clk.now)
	ctx := context.Background()
	w := &world{db: db}
	for _, p := range []struct {
		a    *agents.Agent
		name string
	}{{&w.alice, "alice"}, {&w.bob, "bob"}, {&w.carol, "carol"}} {
		c, err := ag.Create(ctx, p.name, []agents.Scope{agents.ScopePost})
		if err != nil {
			t.Fatal(err)
		}
		*p.a = c.Agent
	}
	if _, err := ag.Rotate(ctx, w.carol.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	ask := func(a agents.Agent, msgID, join string) tasks.Task {
		t.Helper()
		text := "q " + msgID
		in := tasks.AskInput{Asker: tasks.Asker{ID: a.ID, Name: a.Name}, JoinDiscussionID: join,
			Message: a2a.Message{MessageID: msgID, ContextID: "ctx-" + a.Name, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}}
		if join == "" {
			in.Question = text
		}
		task, _, err := tk.Ask(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	reply := func(a agents.Agent, disc, body string) {
		t.Helper()
		if _, err := ds.Reply(ctx, discussions.Author{ID: a.ID, Name: a.Name}, disc, body); err != nil {
			t.Fatal(err)
		}
	}
	w.waiting = ask(w.alice, "m-wait", "")
	w.completed = ask(w.alice, "m-done", "")
	w.disc = w.completed.DiscussionID
	w.joined = ask(w.carol, "m-join", w.disc)
	w.canceled = ask(w.bob, "m-cancel", "")
	reply(w.alice, w.disc, "the author adds detail: not qualifying")
	reply(w.bob, w.disc, "bob answers")
	reply(w.carol, w.disc, "carol chimes in after the answer")
	reply(w.alice, w.waiting.DiscussionID, "alice talks to herself")
	if _, _, err := tk.Cancel(ctx, "", w.canceled.ID); err != nil {
		t.Fatal(err)
	}
	page, err := ds.Inbox(ctx, w.alice.ID, false, nil, "")
	if err != nil || len(page.Entries) == 0 {
		t.Fatalf("alice's inbox: %v %v", page, err)
	}
	if _, err := ds.Ack(ctx, w.alice.ID, []string{page.Entries[0].ID}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{w.waiting.ID, w.completed.ID, w.joined.ID, w.canceled.ID} {
		task, err := db.GetTask(ctx, "", id)
		if err != nil {
			t.Fatal(err)
		}
		switch id {
		case w.waiting.ID:
			w.waiting = task
		case w.completed.ID:
			w.completed = task
		case w.joined.ID:
			w.joined = task
		case w.canceled.ID:
			w.canceled = task
		}
	}
	if w.completed.State != a2a.TaskStateCompleted || w.joined.State != a2a.TaskStateCompleted ||
		w.canceled.State != a2a.TaskStateCanceled || w.waiting.State != a2a.TaskStateWorking {
		t.Fatalf("the world is not as planned: %s %s %s %s", w.completed.State, w.joined.State, w.canceled.State, w.waiting.State)
	}
	return w
}

func (w *world) mutate(t *testing.T, fn func(tx *bolt.Tx) error) {
	t.Helper()
	if err := w.db.db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// link makes an agent linked to an OAuth identity and returns the
// identity.
func (w *world) link(t *testing.T) agents.Identity {
	t.Helper()
	id := agents.Identity{Issuer: "https://idp.example.com", Subject: "svc"}
	_, _, err := w.db.ProvisionAgent(context.Background(), agents.Provision{Identity: id, Names: []string{"svc"},
		Agent: agents.Agent{ID: "01JD0000000000000000000099", Scopes: agents.ProvisionScopes, CreatedAt: time.Now().UTC()}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (w *world) check(t *testing.T) CheckReport {
	t.Helper()
	rep, err := w.db.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func ownerKey(tk tasks.Task) []byte {
	o, _ := idBytes(tk.OwnerID)
	id, _ := idBytes(tk.ID)
	return cat(o, tsID(tk.StatusTime, id))
}

func TestCheckCleanStore(t *testing.T) {
	w := newWorld(t)
	rep := w.check(t)
	if !rep.OK() {
		t.Fatalf("a store written by the services has violations: %+v", rep.Violations)
	}
	if rep.Examined["tasks"] != 4 || rep.Examined["idx_task_owner"] != 4 || rep.Examined["replies"] != 4 ||
		rep.Examined["discussions"] != 3 || rep.Examined["inbox"] == 0 || rep.Examined["agents"] != 3 {
		t.Fatalf("examined: %v", rep.Examined)
	}
	if rep.SchemaVersion != SchemaVersion() || rep.Path != w.db.Path() {
		t.Fatalf("report header: %+v", rep)
	}
}

// TestCheckFindsCorruption breaks one invariant at a time, behind the
// store's back, and wants a report that names it.
func TestCheckFindsCorruption(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, w *world) func(tx *bolt.Tx) error
		want   []Violation // Kind, Bucket and TaskID must match; Detail must contain want's Detail
	}{
		{"owner index entry deleted", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error { return tx.Bucket(bucketTaskByOwner).Delete(ownerKey(w.waiting)) }
		}, []Violation{
			{Kind: VIndexMissing, Bucket: "idx_task_owner", Detail: "missing from this index"},
			{Kind: VCounter, Bucket: "counts", Detail: "counter is 2, counted 1"},
		}},
		{"dangling owner index entry", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			ghost := w.waiting
			ghost.ID = "01JD0Z6X8Q4Y4K2V1T3S5R7P9N"
			return func(tx *bolt.Tx) error { return tx.Bucket(bucketTaskByOwner).Put(ownerKey(ghost), nil) }
		}, []Violation{
			{Kind: VIndexDangling, Bucket: "idx_task_owner", TaskID: "01JD0Z6X8Q4Y4K2V1T3S5R7P9N", Detail: "does not exist"},
			{Kind: VCounter, Bucket: "counts", Detail: "counter is 2, counted 3"},
		}},
		{"stale state index entry left by a transition", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			old := w.canceled
			old.State, old.StatusTime = a2a.TaskStateWorking, old.CreatedAt
			return func(tx *bolt.Tx) error { return indexTask(tx, &old, +1) }
		}, []Violation{
			{Kind: VIndexStale, Bucket: "idx_task_allst", Detail: "does not match task"},
			{Kind: VIndexStale, Bucket: "idx_task_owner"},
		}},
		{"counter off by one", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error {
				return counter(tx.Bucket(bucketCounts), counterKey(bucketTaskAllSt, []byte{stateByte(a2a.TaskStateWorking)}), 1)
			}
		}, []Violation{{Kind: VCounter, Bucket: "counts", Detail: "counter is 2, counted 1"}}},
		{"agent counter off by one", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error { return counter(tx.Bucket(bucketCounts), keyAgentCount, -1) }
		}, []Violation{{Kind: VCounter, Bucket: "counts", Detail: "counter is 2, counted 3"}}},
		{"message id entry deleted", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			o, _ := idBytes(w.completed.OwnerID)
			return func(tx *bolt.Tx) error { return tx.Bucket(bucketTaskMsgIDs).Delete(msgIDKey(o, "m-done")) }
		}, []Violation{{Kind: VMsgID, Bucket: "task_msgids", Detail: "a retry of the ask would create a second task"}}},
		{"working task missing from its discussion's working tasks", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			d, _ := idBytes(w.waiting.DiscussionID)
			id, _ := idBytes(w.waiting.ID)
			return func(tx *bolt.Tx) error { return tx.Bucket(bucketTaskDiscWorking).Delete(cat(d, id)) }
		}, []Violation{{Kind: VTaskDisc, Bucket: "idx_task_discw", Detail: "a reply would not complete it"}}},
		{"finished task left among the working ones", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			d, _ := idBytes(w.canceled.DiscussionID)
			id, _ := idBytes(w.canceled.ID)
			o, _ := idBytes(w.canceled.OwnerID)
			return func(tx *bolt.Tx) error { return tx.Bucket(bucketTaskDiscWorking).Put(cat(d, id), o) }
		}, []Violation{{Kind: VTaskDisc, Bucket: "idx_task_discw", Detail: "as working; it is TASK_STATE_CANCELED"}}},
		{"task missing from its discussion's members", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			d, _ := idBytes(w.joined.DiscussionID)
			o, _ := idBytes(w.joined.OwnerID)
			return func(tx *bolt.Tx) error { return tx.Bucket(bucketDiscMembers).Delete(cat(d, o)) }
		}, []Violation{{Kind: VTaskDisc, Bucket: "disc_members", Detail: "its owner would not hear of replies"}}},
		{"completed task whose reply is gone", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error {
				tk := w.completed
				tk.Artifacts = append([]a2a.Artifact(nil), tk.Artifacts...)
				tk.Artifacts[0].ArtifactID = "reply-01JD0Z6X8Q4Y4K2V1T3S5R7P9N"
				return putTask(tx, &tk)
			}
		}, []Violation{{Kind: VCompletion, Bucket: "tasks", Detail: "completed by reply 01JD0Z6X8Q4Y4K2V1T3S5R7P9N, which is not on discussion"}}},
		{"reply count off", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error {
				d, _, err := getDiscussion(tx, w.disc)
				if err != nil {
					return err
				}
				d.ReplyCount++
				return putDiscussion(tx, &d, statusByte(d.Status))
			}
		}, []Violation{{Kind: VDiscussion, Bucket: "discussions", Detail: "replyCount is 4, 3 replies are stored"}}},
		{"answer time not the earliest answer's", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error {
				d, _, err := getDiscussion(tx, w.disc)
				if err != nil {
					return err
				}
				d.AnsweredAt = d.AnsweredAt.Add(time.Millisecond)
				return putDiscussion(tx, &d, statusByte(d.Status))
			}
		}, []Violation{{Kind: VDiscussion, Bucket: "discussions", Detail: "the earliest visible qualifying reply is from"}}},
		{"hidden reply count off", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error {
				d, _, err := getDiscussion(tx, w.disc)
				if err != nil {
					return err
				}
				d.HiddenReplies = 1
				return putDiscussion(tx, &d, statusByte(d.Status))
			}
		}, []Violation{{Kind: VDiscussion, Bucket: "discussions", Detail: "hiddenReplies is 1, 0 replies are hidden"}}},
		{"discussion status index entry deleted", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			d, _ := idBytes(w.disc)
			return func(tx *bolt.Tx) error {
				return tx.Bucket(bucketDiscByStatus).Delete(cat([]byte{statusByte(discussions.StatusAnswered)}, d))
			}
		}, []Violation{{Kind: VDiscussion, Bucket: "idx_disc_status", Detail: "missing from the status index"}}},
		{"unacked index entry deleted", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error {
				k, _ := tx.Bucket(bucketInboxUnacked).Cursor().First()
				return tx.Bucket(bucketInboxUnacked).Delete(k)
			}
		}, []Violation{{Kind: VInbox, Bucket: "idx_inbox_new", Detail: "missing from the unacked index"}}},
		{"identity entry deleted", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			id := w.link(t)
			return func(tx *bolt.Tx) error { return tx.Bucket(bucketAgentIdentities).Delete(identityKey(id)) }
		}, []Violation{{Kind: VAgent, Bucket: "agents", Detail: "which agent_identities does not map to it"}}},
		{"identity entry pointing at another agent", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			id := w.link(t)
			return func(tx *bolt.Tx) error {
				return tx.Bucket(bucketAgentIdentities).Put(identityKey(id), []byte(w.carol.ID))
			}
		}, []Violation{{Kind: VAgent, Bucket: "agent_identities", Detail: "which is not linked to it"}}},
		{"inbox notice of a completion deleted", func(t *testing.T, w *world) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error {
				c := tx.Bucket(bucketInbox).Cursor()
				carol, _ := idBytes(w.carol.ID)
				for k, v := c.Seek(carol); k != nil; k, v = c.Next() {
					e, err := decodeInbox(v)
					if err != nil {
						return err
					}
					if e.ReplyID != completingReply(&w.joined) {
						continue
					}
					if err := tx.Bucket(bucketInboxUnacked).Delete(k); err != nil {
						return err
					}
					return tx.Bucket(bucketInbox).Delete(k)
				}
				t.Fatal("carol has no notice of the completing reply")
				return nil
			}
		}, []Violation{{Kind: VInbox, Bucket: "inbox", Detail: "was not notified of reply"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.mutate(t, tc.break_(t, w))
			rep := w.check(t)
			if rep.OK() {
				t.Fatal("check found nothing")
			}
			for _, want := range tc.want {
				found := false
				for _, v := range rep.Violations {
					if v.Kind == want.Kind && v.Bucket == want.Bucket && (want.TaskID == "" || v.TaskID == want.TaskID) &&
						strings.Contains(v.Detail, want.Detail) && v.Key != "" && v.KeyHex != "" {
						found = true
					}
				}
				if !found {
					t.Errorf("no violation like %+v in:\n%s", want, dump(rep))
				}
			}
		})
	}
}

func dump(rep CheckReport) string {
	var b strings.Builder
	for _, v := range rep.Violations {
		b.WriteString(v.Kind + " " + v.Bucket + " [" + v.Key + "] " + v.TaskID + ": " + v.Detail + "\n")
	}
	return b.String()
}

func TestCheckNamesIndexKeyParts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bucket []byte
		key    func(w *world, owner, id []byte) []byte
		want   func(w *world) string
	}{
		{"owner and state", bucketTaskByState,
			func(w *world, o, id []byte) []byte {
				return cat(o, []byte{stateByte(a2a.TaskStateWorking)}, tsID(w.waiting.StatusTime, id))
			},
			func(w *world) string { return "owner=" + w.alice.ID + " state=TASK_STATE_WORKING" }},
		{"context", bucketTaskAllCtx,
			func(w *world, _, id []byte) []byte {
				return cat(ctxPart(w.waiting.ContextID), tsID(w.waiting.StatusTime, id))
			},
			func(*world) string { return `ctx="ctx-alice"` }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			o, _ := idBytes(w.waiting.OwnerID)
			id, _ := idBytes(w.waiting.ID)
			w.mutate(t, func(tx *bolt.Tx) error { return tx.Bucket(tc.bucket).Delete(tc.key(w, o, id)) })
			rep := w.check(t)
			want := tc.want(w) + " ts=" + a2a.FormatTime(w.waiting.StatusTime) + " task=" + w.waiting.ID
			var keys []string
			for _, v := range rep.Violations {
				keys = append(keys, v.Key)
				if v.Kind == VIndexMissing && v.Key == want {
					return
				}
			}
			t.Fatalf("want key %q, got %q", want, keys)
		})
	}
}

// A context index entry whose value names another owner or state is
// stale: listings filter on it.
func TestCheckContextIndexValues(t *testing.T) {
	w := newWorld(t)
	id, _ := idBytes(w.waiting.ID)
	bob, _ := idBytes(w.bob.ID)
	k := cat(ctxPart(w.waiting.ContextID), tsID(w.waiting.StatusTime, id))
	w.mutate(t, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTaskAllCtx).Put(k, append(bytes.Clone(bob), stateByte(a2a.TaskStateWorking)))
	})
	rep := w.check(t)
	if len(rep.Violations) != 1 || rep.Violations[0].Kind != VIndexStale || rep.Violations[0].TaskID != w.waiting.ID ||
		!strings.Contains(rep.Violations[0].Detail, "value owner="+w.bob.ID+" state=TASK_STATE_WORKING does not match") {
		t.Fatalf("want one stale context entry:\n%s", dump(rep))
	}
}

func TestCheckTruncatesLongReports(t *testing.T) {
	w := newWorld(t)
	w.mutate(t, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTaskAll)
		for i := range MaxViolations + 10 {
			k := make([]byte, 24)
			binary.BigEndian.PutUint64(k, uint64(i))
			k[23] = 1
			if err := b.Put(k, nil); err != nil {
				return err
			}
		}
		return nil
	})
	rep := w.check(t)
	if len(rep.Violations) != MaxViolations || rep.Truncated == 0 {
		t.Fatalf("listed %d, truncated %d", len(rep.Violations), rep.Truncated)
	}
}

func TestVerifyFile(t *testing.T) {
	w := newWorld(t)
	path := filepath.Join(t.TempDir(), "copy.db")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.Backup(f, nil); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	rep, err := VerifyFile(path, time.Second)
	if err != nil || !rep.OK() || rep.Examined["tasks"] != 4 {
		t.Fatalf("verify a good copy: %v %+v", err, rep)
	}

	// A newer schema is refused before anything else.
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetSchemaVersionForTest(SchemaVersion() + 1); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	if _, err := VerifyFile(path, time.Second); err == nil || !strings.Contains(err.Error(), "newer kfa") {
		t.Fatalf("verify a newer file: %v", err)
	}

	// A bbolt file that is not kfa's.
	other := filepath.Join(t.TempDir(), "other.db")
	bdb, err := bolt.Open(other, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("x")); return err }); err != nil {
		t.Fatal(err)
	}
	_ = bdb.Close()
	if _, err := VerifyFile(other, time.Second); err == nil || !strings.Contains(err.Error(), "not a kfa database") {
		t.Fatalf("verify a foreign file: %v", err)
	}
}
