package e2e

import (
	"bytes"
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
	"github.com/kfa-project/kfa/push"
)

// TestForeignTaskIsNeverDecoded: every route that takes a task id checks
// the owner before it decodes the stored task, so another agent's task
// costs what an unknown id costs and the time of an answer cannot tell
// whether it exists. The proof does not time anything (that is
// TestForeignTaskTiming): alice's task and its push configs are stored
// with documents that cannot be decoded, and every route bob calls with
// its id answers exactly as it does for an id that does not exist, where
// a route that decoded first would fail. Alice's own subscribe and
// config listing show they are indeed undecodable.
func TestForeignTaskIsNeverDecoded(t *testing.T) {
	h := start(t, withGRPC)
	alice, ac := h.agent("alice")
	bob, _ := h.agent("bob")
	res, err := ac.SendMessage(context.Background(), askReq("a1", "A private question with long details",
		map[string]any{"details": strings.Repeat("details ", 2400)}))
	if err != nil || res.Task == nil {
		t.Fatalf("ask: %+v %v", res, err)
	}
	tk := *res.Task
	heavyConfigs(t, h, alice.Token, tk.ID, 2)
	const missing = "01JD0Z6X8Q4Y4K2V1T3S5R7P9N"
	h, restore := corruptTask(t, h, tk.ID)

	for name, call := range taskIDRoutes(h, bob.Token) {
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
	// The owner's own subscribe decodes the task, and cannot; the owner's
	// own config listing decodes the configs, and cannot.
	resp, body := h.raw("GET", "/a2a/v1/tasks/"+tk.ID+":subscribe", a2aHeaders(alice.Token), "")
	if resp.StatusCode != 500 {
		t.Fatalf("the owner subscribed to a task whose body does not decode: %d %s", resp.StatusCode, body)
	}
	resp, body = h.raw("GET", "/a2a/v1/tasks/"+tk.ID+"/pushNotificationConfigs", a2aHeaders(alice.Token), "")
	if resp.StatusCode != 500 {
		t.Fatalf("the owner listed configs that do not decode: %d %s", resp.StatusCode, body)
	}
	h = restore()
	if got := h.task(client.New(h.url, client.WithToken(alice.Token)), tk.ID); got.ID != tk.ID {
		t.Fatalf("the restored task: %+v", got)
	}
}

// corruptTask stores task id with a body that cannot be decoded (its
// header, owner included, intact), and each of its push configs with a
// document that cannot be decoded. It returns the harness to go on with
// and restore, which puts the originals back and returns the harness
// after it, so that kfa check passes on what the test leaves. On bbolt
// the server is stopped for each rewrite and started again on the same
// data.
func corruptTask(t *testing.T, h *harness, id string) (*harness, func() *harness) {
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
		exec(`UPDATE push_configs SET doc = 'not JSON'::bytea || doc WHERE task_id = $1`, id)
		return h, func() *harness {
			exec(`UPDATE tasks SET w_status = substring(w_status from 9) WHERE id = $1`, id)
			exec(`UPDATE push_configs SET doc = substring(doc from 9) WHERE task_id = $1`, id)
			return h
		}
	}
	cfg := h.cfg
	key := ulid.MustParse(id)
	orig := map[string][]byte{} // bucket | 0 | key -> the original value
	rewrite := func(h *harness, change func(tx *bolt.Tx) error) *harness {
		// Stopped without kfa check: the file holds the broken records.
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
		err = db.Update(change)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		return startWith(t, cfg)
	}
	keep := func(bucket string, k, v []byte) {
		orig[bucket+"\x00"+string(k)] = append([]byte(nil), v...)
	}
	h = rewrite(h, func(tx *bolt.Tx) error {
		// A record ends with the JSON of the task's last history message:
		// its closing brace made an x, the message no longer decodes.
		b := tx.Bucket([]byte("tasks"))
		v := b.Get(key[:])
		if v == nil || v[len(v)-1] != '}' {
			return fmt.Errorf("task %s: no record ending in a JSON object", id)
		}
		keep("tasks", key[:], v)
		bad := append([]byte(nil), v...)
		bad[len(bad)-1] = 'x'
		if err := b.Put(key[:], bad); err != nil {
			return err
		}
		// Its push configs, keyed task id | config id, hold JSON.
		pc := tx.Bucket([]byte("push_configs"))
		var ks [][]byte
		c := pc.Cursor()
		for k, _ := c.Seek(key[:]); k != nil && bytes.HasPrefix(k, key[:]); k, _ = c.Next() {
			ks = append(ks, bytes.Clone(k))
		}
		for _, k := range ks {
			v := pc.Get(k)
			keep("push_configs", k, v)
			if err := pc.Put(k, append([]byte("not JSON"), v...)); err != nil {
				return err
			}
		}
		return nil
	})
	return h, func() *harness {
		return rewrite(h, func(tx *bolt.Tx) error {
			for bk, v := range orig {
				bucket, k, _ := strings.Cut(bk, "\x00")
				if err := tx.Bucket([]byte(bucket)).Put([]byte(k), v); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// taskIDRoutes are the calls, as the agent with token, of every route
// that takes a task id, on every binding (HTTP+JSON, JSON-RPC in both
// protocol versions, and gRPC when the server runs it): each takes the
// id and answers the status and body.
func taskIDRoutes(h *harness, token string) map[string]func(id string) (int, string) {
	rest := func(method, path, body string) func(id string) (int, string) {
		return func(id string) (int, string) {
			resp, b := h.raw(method, strings.ReplaceAll(path, "ID", id), a2aHeaders(token), strings.ReplaceAll(body, "ID", id))
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
	routes := map[string]func(id string) (int, string){
		"GET tasks/{id}":                             rest("GET", "/a2a/v1/tasks/ID", ""),
		"POST tasks/{id}:cancel":                     rest("POST", "/a2a/v1/tasks/ID:cancel", "{}"),
		"GET tasks/{id}:subscribe":                   rest("GET", "/a2a/v1/tasks/ID:subscribe", ""),
		"POST tasks/{id}:subscribe":                  rest("POST", "/a2a/v1/tasks/ID:subscribe", "{}"),
		"POST message:send with taskId":              rest("POST", "/a2a/v1/message:send", send),
		"POST message:stream with taskId":            rest("POST", "/a2a/v1/message:stream", send),
		"POST pushNotificationConfigs":               rest("POST", "/a2a/v1/tasks/ID/pushNotificationConfigs", push),
		"GET pushNotificationConfigs":                rest("GET", "/a2a/v1/tasks/ID/pushNotificationConfigs", ""),
		"GET pushNotificationConfigs/{id}":           rest("GET", "/a2a/v1/tasks/ID/pushNotificationConfigs/c1", ""),
		"DELETE pushNotificationConfigs/{id}":        rest("DELETE", "/a2a/v1/tasks/ID/pushNotificationConfigs/c1", ""),
		"JSON-RPC GetTask":                           rpc("GetTask", `{"id":"ID"}`),
		"JSON-RPC CancelTask":                        rpc("CancelTask", `{"id":"ID"}`),
		"JSON-RPC SubscribeToTask":                   rpc("SubscribeToTask", `{"id":"ID"}`),
		"JSON-RPC SendMessage with taskId":           rpc("SendMessage", send),
		"JSON-RPC SendStreamingMessage":              rpc("SendStreamingMessage", send),
		"JSON-RPC CreateTaskPushConfig":              rpc("CreateTaskPushNotificationConfig", `{"taskId":"ID","url":"https://hooks.example.com/kfa"}`),
		"JSON-RPC GetTaskPushConfig":                 rpc("GetTaskPushNotificationConfig", `{"taskId":"ID","id":"c1"}`),
		"JSON-RPC ListTaskPushConfigs":               rpc("ListTaskPushNotificationConfigs", `{"taskId":"ID"}`),
		"JSON-RPC DeleteTaskPushConfig":              rpc("DeleteTaskPushNotificationConfig", `{"taskId":"ID","id":"c1"}`),
		"JSON-RPC 0.3 tasks/get":                     rpc("tasks/get", `{"id":"ID"}`),
		"JSON-RPC 0.3 tasks/cancel":                  rpc("tasks/cancel", `{"id":"ID"}`),
		"JSON-RPC 0.3 tasks/resubscribe":             rpc("tasks/resubscribe", `{"id":"ID"}`),
		"JSON-RPC 0.3 message/send with taskId":      rpc("message/send", send03),
		"JSON-RPC 0.3 message/stream":                rpc("message/stream", send03),
		"JSON-RPC 0.3 pushNotificationConfig/set":    rpc("tasks/pushNotificationConfig/set", `{"taskId":"ID","pushNotificationConfig":{"url":"https://hooks.example.com/kfa"}}`),
		"JSON-RPC 0.3 pushNotificationConfig/get":    rpc("tasks/pushNotificationConfig/get", `{"id":"ID","pushNotificationConfigId":"c1"}`),
		"JSON-RPC 0.3 pushNotificationConfig/list":   rpc("tasks/pushNotificationConfig/list", `{"id":"ID"}`),
		"JSON-RPC 0.3 pushNotificationConfig/delete": rpc("tasks/pushNotificationConfig/delete", `{"id":"ID","pushNotificationConfigId":"c1"}`),
	}
	if h.srv.GRPCAddr() != "" {
		for name, call := range grpcTaskIDRoutes(h, token) {
			routes[name] = call
		}
	}
	return routes
}

// heavyConfigs gives task id n push configs of the agent with token, each
// carrying 4 KB of credentials: the most a config holds, so that reading
// them costs what it can.
func heavyConfigs(t *testing.T, h *harness, token, id string, n int) {
	t.Helper()
	for i := range n {
		body := fmt.Sprintf(`{"id":"heavy-%d","url":"https://hooks.example.com/kfa/%d","authentication":{"scheme":"Bearer","credentials":"%s"}}`,
			i, i, strings.Repeat("c", push.MaxCredentialsBytes))
		resp, b := h.raw("POST", "/a2a/v1/tasks/"+id+"/pushNotificationConfigs", a2aHeaders(token), body)
		if resp.StatusCode != 200 {
			t.Fatalf("config %d: %d %s", i, resp.StatusCode, b)
		}
	}
}
