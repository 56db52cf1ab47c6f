package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/client"
)

// TestForeignTaskIsNeverDecoded: every route that takes a task id checks
// the owner before it decodes the stored task, so another agent's task
// costs what an unknown id costs and the time of an answer cannot tell
// whether it exists. The proof does not time anything: alice's task is
// stored with a body that cannot be decoded, and every route bob calls
// with its id answers exactly as it does for an id that does not exist,
// where a route that decoded first would fail. Alice's own subscribe
// shows the body is indeed undecodable.
func TestForeignTaskIsNeverDecoded(t *testing.T) {
	h := start(t, nil)
	alice, ac := h.agent("alice")
	bob, _ := h.agent("bob")
	res, err := ac.SendMessage(context.Background(), askReq("a1", "A private question with long details",
		map[string]any{"details": strings.Repeat("details ", 2400)}))
	if err != nil || res.Task == nil {
		t.Fatalf("ask: %+v %v", res, err)
	}
	tk := *res.Task
	const missing = "01JD0Z6X8Q4Y4K2V1T3S5R7P9N"
	h, restore := corruptTaskBody(t, h, tk.ID)

	rest := func(method, path, body string) func(id string) (int, string) {
		return func(id string) (int, string) {
			resp, b := h.raw(method, strings.ReplaceAll(path, "ID", id), a2aHeaders(bob.Token), strings.ReplaceAll(body, "ID", id))
			return resp.StatusCode, string(b)
		}
	}
	rpc := func(method, params string) func(id string) (int, string) {
		return rest("POST", "/a2a/jsonrpc", `{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":`+params+`}`)
	}
	const (
		send   = `{"message":{"role":"ROLE_USER","messageId":"b1","taskId":"ID","parts":[{"text":"more details"}]}}`
		send03 = `{"message":{"kind":"message","role":"user","messageId":"b1","taskId":"ID","parts":[{"kind":"text","text":"more details"}]}}`
		push   = `{"url":"https://hooks.example.com/kfa"}`
	)
	for name, call := range map[string]func(id string) (int, string){
		"GET tasks/{id}":                           rest("GET", "/a2a/v1/tasks/ID", ""),
		"POST tasks/{id}:cancel":                   rest("POST", "/a2a/v1/tasks/ID:cancel", "{}"),
		"GET tasks/{id}:subscribe":                 rest("GET", "/a2a/v1/tasks/ID:subscribe", ""),
		"POST tasks/{id}:subscribe":                rest("POST", "/a2a/v1/tasks/ID:subscribe", "{}"),
		"POST message:send with taskId":            rest("POST", "/a2a/v1/message:send", send),
		"POST message:stream with taskId":          rest("POST", "/a2a/v1/message:stream", send),
		"POST pushNotificationConfigs":             rest("POST", "/a2a/v1/tasks/ID/pushNotificationConfigs", push),
		"GET pushNotificationConfigs":              rest("GET", "/a2a/v1/tasks/ID/pushNotificationConfigs", ""),
		"GET pushNotificationConfigs/{id}":         rest("GET", "/a2a/v1/tasks/ID/pushNotificationConfigs/c1", ""),
		"DELETE pushNotificationConfigs/{id}":      rest("DELETE", "/a2a/v1/tasks/ID/pushNotificationConfigs/c1", ""),
		"JSON-RPC GetTask":                         rpc("GetTask", `{"id":"ID"}`),
		"JSON-RPC CancelTask":                      rpc("CancelTask", `{"id":"ID"}`),
		"JSON-RPC SubscribeToTask":                 rpc("SubscribeToTask", `{"id":"ID"}`),
		"JSON-RPC SendMessage with taskId":         rpc("SendMessage", send),
		"JSON-RPC SendStreamingMessage":            rpc("SendStreamingMessage", send),
		"JSON-RPC CreateTaskPushConfig":            rpc("CreateTaskPushNotificationConfig", `{"taskId":"ID","url":"https://hooks.example.com/kfa"}`),
		"JSON-RPC ListTaskPushConfigs":             rpc("ListTaskPushNotificationConfigs", `{"taskId":"ID"}`),
		"JSON-RPC 0.3 tasks/get":                   rpc("tasks/get", `{"id":"ID"}`),
		"JSON-RPC 0.3 tasks/cancel":                rpc("tasks/cancel", `{"id":"ID"}`),
		"JSON-RPC 0.3 tasks/resubscribe":           rpc("tasks/resubscribe", `{"id":"ID"}`),
		"JSON-RPC 0.3 message/send with taskId":    rpc("message/send", send03),
		"JSON-RPC 0.3 message/stream":              rpc("message/stream", send03),
		"JSON-RPC 0.3 pushNotificationConfig/list": rpc("tasks/pushNotificationConfig/list", `{"id":"ID"}`),
	} {
		t.Run(name, func(t *testing.T) {
			st1, b1 := call(tk.ID)
			st2, b2 := call(missing)
			if st1 != st2 || b1 != strings.ReplaceAll(b2, missing, tk.ID) {
				t.Fatalf("another agent's task and a missing one differ:\n%d %s\n%d %s", st1, b1, st2, b2)
			}
			if !strings.Contains(b1, "TASK_NOT_FOUND") {
				t.Fatalf("not TaskNotFound: %d %s", st1, b1)
			}
		})
	}
	// The owner's own subscribe decodes the task, and cannot.
	resp, body := h.raw("GET", "/a2a/v1/tasks/"+tk.ID+":subscribe", a2aHeaders(alice.Token), "")
	if resp.StatusCode != 500 {
		t.Fatalf("the owner subscribed to a task whose body does not decode: %d %s", resp.StatusCode, body)
	}
	h = restore()
	if got := h.task(client.New(h.url, client.WithToken(alice.Token)), tk.ID); got.ID != tk.ID {
		t.Fatalf("the restored task: %+v", got)
	}
}

// corruptTaskBody stores task id with a body that cannot be decoded (its
// header, owner included, intact). It returns the harness to go on with
// and restore, which puts the original back and returns the harness after
// it, so that kfa check passes on what the test leaves. On bbolt the
// server is stopped for each rewrite and started again on the same data.
func corruptTaskBody(t *testing.T, h *harness, id string) (*harness, func() *harness) {
	t.Helper()
	ctx := context.Background()
	if onPostgres() {
		exec := func(sql string, args ...any) {
			conn, err := pgx.Connect(ctx, h.cfg.Store)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, sql, args...); err != nil {
				t.Fatal(err)
			}
		}
		exec(`UPDATE tasks SET w_status = 'not JSON'::bytea || w_status WHERE id = $1`, id)
		return h, func() *harness {
			exec(`UPDATE tasks SET w_status = substring(w_status from 9) WHERE id = $1`, id)
			return h
		}
	}
	cfg := h.cfg
	key := ulid.MustParse(id)
	var orig []byte
	rewrite := func(h *harness, change func(v []byte) []byte) *harness {
		// Stopped without kfa check: the file holds the broken record.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.srv.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		h.srv = nil
		db, err := bolt.Open(filepath.Join(cfg.DataDir, "kfa.db"), 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("tasks"))
			v := b.Get(key[:])
			if v == nil {
				return fmt.Errorf("task %s: no record", id)
			}
			return b.Put(key[:], change(v))
		})
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		return startWith(t, cfg)
	}
	// A record ends with the JSON of the task's last history message: its
	// closing brace made an x, the message no longer decodes.
	h = rewrite(h, func(v []byte) []byte {
		if v[len(v)-1] != '}' {
			t.Fatalf("task %s: the record does not end in a JSON object", id)
		}
		orig = append([]byte(nil), v...)
		bad := append([]byte(nil), v...)
		bad[len(bad)-1] = 'x'
		return bad
	})
	return h, func() *harness { return rewrite(h, func([]byte) []byte { return orig }) }
}
