package e2e

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk03 "github.com/a2aproject/a2a-go/a2a"
	client03 "github.com/a2aproject/a2a-go/a2aclient"
	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/kfa-project/kfa/server"
)

// sdkClientVia opens an SDK v2 client on the given binding of kfa's card.
func sdkClientVia(t *testing.T, h *harness, token string, binding sdk.TransportProtocol) *a2aclient.Client {
	t.Helper()
	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, h.url)
	if err != nil {
		t.Fatal(err)
	}
	for _, iface := range card.SupportedInterfaces {
		iface.URL = replacePrefix(iface.URL, h.cfg.PublicURL, h.url)
	}
	hc := &http.Client{Transport: bearerTransport{token: token}}
	c, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []sdk.TransportProtocol{binding}}),
		a2aclient.WithRESTTransport(hc), a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatalf("SDK client over %s: %v", binding, err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

func replacePrefix(s, old, new string) string {
	if strings.HasPrefix(s, old) {
		return new + s[len(old):]
	}
	return s
}

// collect gathers a stream's events in the background until it ends.
func collect[E any](seq func(func(E, error) bool)) <-chan []any {
	out := make(chan []any, 1)
	go func() {
		var got []any
		seq(func(ev E, err error) bool {
			if err != nil {
				got = append(got, err)
				return false
			}
			got = append(got, ev)
			return true
		})
		out <- got
	}()
	return out
}

func waitEvents(t *testing.T, ch <-chan []any) []any {
	t.Helper()
	select {
	case got := <-ch:
		return got
	case <-time.After(20 * time.Second):
		t.Fatal("the SDK stream did not end within 20s")
	}
	return nil
}

// TestSDKStreamsAndJSONRPC drives kfa with the official SDK v2.3.1 over
// both bindings: send, get, list, cancel, streamed ask and subscribe.
func TestSDKStreamsAndJSONRPC(t *testing.T) {
	h := start(t, func(c *server.Config) { c.AskRate = 0 })
	ctx := context.Background()
	alice, _ := h.agent("alice")
	_, bob := h.agent("bob")
	for _, binding := range []sdk.TransportProtocol{sdk.TransportProtocolHTTPJSON, sdk.TransportProtocolJSONRPC} {
		t.Run(string(binding), func(t *testing.T) {
			c := sdkClientVia(t, h, alice.Token, binding)
			ask := func(q string) *sdk.SendMessageRequest {
				return &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewDataPart(map[string]any{"action": "ask", "question": q})),
					Config: &sdk.SendMessageConfig{ReturnImmediately: true}}
			}
			res, err := c.SendMessage(ctx, ask("over "+string(binding)))
			if err != nil {
				t.Fatalf("send: %v", err)
			}
			task := res.(*sdk.Task)
			if got, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID}); err != nil || got.Status.State != sdk.TaskStateWorking {
				t.Fatalf("get: %+v %v", got, err)
			}
			if l, err := c.ListTasks(ctx, &sdk.ListTasksRequest{PageSize: 5}); err != nil || len(l.Tasks) == 0 {
				t.Fatalf("list: %+v %v", l, err)
			}
			if _, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: "01JD0000000000000000000000"}); !errors.Is(err, sdk.ErrTaskNotFound) {
				t.Fatalf("get missing: %v", err)
			}

			// Subscribe, then answer: Task, artifact, completed status, end.
			events := collect(c.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: task.ID}))
			waitSubscribed(t, h, task.ID)
			if _, err := bob.Reply(ctx, task.Metadata["discussionId"].(string), "answer over "+string(binding)); err != nil {
				t.Fatal(err)
			}
			checkCompletionEvents(t, waitEvents(t, events), task.ID)

			// A streamed ask: the Task first, then the cancel's status, then the end.
			streamed := &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewDataPart(map[string]any{
				"action": "ask", "question": "streamed over " + string(binding)}))}
			events = collect(c.SendStreamingMessage(ctx, streamed))
			id := waitTaskOf(t, h, alice.Token, "streamed over "+string(binding))
			if _, err := c.CancelTask(ctx, &sdk.CancelTaskRequest{ID: sdk.TaskID(id)}); err != nil {
				t.Fatal(err)
			}
			got := waitEvents(t, events)
			if onlyEnded(got, sdk.TaskStateCanceled) {
				return // the cancel committed before the stream read the task
			}
			if len(got) != 2 {
				t.Fatalf("streamed ask events: %#v", got)
			}
			if tk, ok := got[0].(*sdk.Task); !ok || tk.Status.State != sdk.TaskStateWorking {
				t.Fatalf("first event: %#v", got[0])
			}
			if su, ok := got[1].(*sdk.TaskStatusUpdateEvent); !ok || su.Status.State != sdk.TaskStateCanceled {
				t.Fatalf("last event: %#v", got[1])
			}
		})
	}
}

// onlyEnded reports whether a stream's events are the one Task of a task
// already in state: the transition committed between the subscription
// (which waitSubscribed waits for) and the stream's read of the task, and
// the stream answered with the task as it ended, as it must. The window
// is wider on PostgreSQL, where that read is a round trip.
func onlyEnded(got []any, state sdk.TaskState) bool {
	if len(got) != 1 {
		return false
	}
	tk, ok := got[0].(*sdk.Task)
	return ok && tk.Status.State == state
}

func checkCompletionEvents(t *testing.T, got []any, id sdk.TaskID) {
	t.Helper()
	if onlyEnded(got, sdk.TaskStateCompleted) {
		if got[0].(*sdk.Task).ID != id {
			t.Fatalf("the ended task: %#v", got[0])
		}
		return
	}
	if len(got) != 3 {
		t.Fatalf("subscribe events: %#v", got)
	}
	if tk, ok := got[0].(*sdk.Task); !ok || tk.ID != id {
		t.Fatalf("first event: %#v", got[0])
	}
	if au, ok := got[1].(*sdk.TaskArtifactUpdateEvent); !ok || len(au.Artifact.Parts) != 2 {
		t.Fatalf("artifact event: %#v", got[1])
	}
	if su, ok := got[2].(*sdk.TaskStatusUpdateEvent); !ok || su.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("status event: %#v", got[2])
	}
}

// waitSubscribed waits until the server holds a stream on this task, so
// the answer cannot come before the subscription.
func waitSubscribed(t *testing.T, h *harness, id sdk.TaskID) {
	t.Helper()
	select {
	case <-h.srv.StreamOn(string(id)):
	case <-time.After(20 * time.Second):
		t.Fatalf("no stream on %s after 20s", id)
	}
}

// waitTaskOf finds the id of the agent's task whose question is q, once the
// streamed ask has created it.
func waitTaskOf(t *testing.T, h *harness, token, q string) string {
	t.Helper()
	c := h.anon.WithToken(token)
	deadline := time.Now().Add(20 * time.Second)
	for {
		l, err := c.ListTasks(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range l.Tasks {
			if len(tk.History) > 0 && tk.Status.State == "TASK_STATE_WORKING" &&
				len(tk.History[0].Parts) > 0 && containsQuestion(tk.History[0].Parts[0].Data, q) {
				waitSubscribed(t, h, sdk.TaskID(tk.ID))
				return tk.ID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no task for %q after 20s", q)
		}
		time.Sleep(5 * time.Millisecond) // the task appears when the SDK's request arrives; nothing signals it
	}
}

func containsQuestion(data []byte, q string) bool {
	return strings.Contains(string(data), `"question":"`+q+`"`)
}

// TestSDK03Interop drives kfa's 0.3 JSON-RPC surface with the official 0.3
// Go client, github.com/a2aproject/a2a-go v0.3.15.
func TestSDK03Interop(t *testing.T) {
	h := start(t, func(c *server.Config) { c.AskRate = 0 })
	ctx := context.Background()
	alice, _ := h.agent("alice")
	_, bob := h.agent("bob")
	hc := &http.Client{Transport: bearerTransport{token: alice.Token}}
	// kfa's card is 1.0-shaped; a 0.3 client is pointed at the endpoint.
	c, err := client03.NewFromEndpoints(ctx,
		[]sdk03.AgentInterface{{Transport: sdk03.TransportProtocolJSONRPC, URL: h.url + "/a2a/jsonrpc"}},
		client03.WithJSONRPCTransport(hc),
		client03.WithConfig(client03.Config{Polling: true})) // blocking=false, as asks need
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()

	askMsg := func(q string) *sdk03.MessageSendParams {
		return &sdk03.MessageSendParams{Message: sdk03.NewMessage(sdk03.MessageRoleUser,
			sdk03.DataPart{Data: map[string]any{"action": "ask", "question": q}})}
	}
	res, err := c.SendMessage(ctx, askMsg("asked by a 0.3 client"))
	if err != nil {
		t.Fatalf("0.3 send: %v", err)
	}
	task, ok := res.(*sdk03.Task)
	if !ok || task.Status.State != sdk03.TaskStateWorking {
		t.Fatalf("0.3 ask result: %#v", res)
	}
	got, err := c.GetTask(ctx, &sdk03.TaskQueryParams{ID: task.ID})
	if err != nil || got.Status.State != sdk03.TaskStateWorking || len(got.History) != 1 {
		t.Fatalf("0.3 get: %+v %v", got, err)
	}
	if _, err := c.GetTask(ctx, &sdk03.TaskQueryParams{ID: "01JD0000000000000000000000"}); !errors.Is(err, sdk03.ErrTaskNotFound) {
		t.Fatalf("0.3 get missing: %v", err)
	}

	// Resubscribe and answer: task, artifact-update, final status-update.
	events := collect(c.ResubscribeToTask(ctx, &sdk03.TaskIDParams{ID: task.ID}))
	waitSubscribed(t, h, sdk.TaskID(task.ID))
	if _, err := bob.Reply(ctx, task.Metadata["discussionId"].(string), "answer for 0.3"); err != nil {
		t.Fatal(err)
	}
	evs := waitEvents(t, events)
	if tk, ok := evs[0].(*sdk03.Task); len(evs) == 1 && ok && tk.Status.State == sdk03.TaskStateCompleted {
		// The reply committed before the stream read the task (see
		// onlyEnded): the task as it ended stands for every event.
	} else if len(evs) != 3 {
		t.Fatalf("0.3 resubscribe events: %#v", evs)
	} else if su, ok := evs[2].(*sdk03.TaskStatusUpdateEvent); !ok || su.Status.State != sdk03.TaskStateCompleted || !su.Final {
		t.Fatalf("0.3 final event: %#v", evs[2])
	}
	// A completed task is not cancelable; a waiting one is.
	if _, err := c.CancelTask(ctx, &sdk03.TaskIDParams{ID: task.ID}); !errors.Is(err, sdk03.ErrTaskNotCancelable) {
		t.Fatalf("0.3 cancel completed: %v", err)
	}
	res, err = c.SendMessage(ctx, askMsg("second 0.3 question"))
	if err != nil {
		t.Fatal(err)
	}
	canceled, err := c.CancelTask(ctx, &sdk03.TaskIDParams{ID: res.(*sdk03.Task).ID})
	if err != nil || canceled.Status.State != sdk03.TaskStateCanceled {
		t.Fatalf("0.3 cancel: %+v %v", canceled, err)
	}
	// The client's defaults send no configuration; 0.3's blocking defaults to
	// false, so that ask is accepted. An explicit blocking=true is refused.
	plain, err := client03.NewFromEndpoints(ctx,
		[]sdk03.AgentInterface{{Transport: sdk03.TransportProtocolJSONRPC, URL: h.url + "/a2a/jsonrpc"}},
		client03.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Destroy()
	if res, err := plain.SendMessage(ctx, askMsg("default configuration")); err != nil || res.(*sdk03.Task).Status.State != sdk03.TaskStateWorking {
		t.Fatalf("0.3 ask with the client's defaults: %#v %v", res, err)
	}
	yes := true
	blocking := askMsg("blocking?")
	blocking.Config = &sdk03.MessageSendConfig{Blocking: &yes}
	if _, err := plain.SendMessage(ctx, blocking); !errors.Is(err, sdk03.ErrUnsupportedOperation) {
		t.Fatalf("0.3 blocking ask: %v", err)
	}
}
