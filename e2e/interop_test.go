package e2e

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/kfa-project/kfa/server"
)

// bearerTransport adds a bearer token to every request of the SDK client.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// sdkClient resolves kfa's card with the official SDK and opens its
// HTTP+JSON client, authenticated as token.
func sdkClient(t *testing.T, h *harness, token string) (*a2aclient.Client, *sdk.AgentCard) {
	t.Helper()
	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, h.url)
	if err != nil {
		t.Fatalf("the SDK cannot read kfa's card: %v", err)
	}
	// The card advertises the public URL; point it at this test server.
	for _, iface := range card.SupportedInterfaces {
		iface.URL = strings.Replace(iface.URL, h.cfg.PublicURL, h.url, 1)
	}
	hc := &http.Client{Transport: bearerTransport{token: token}}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithRESTTransport(hc))
	if err != nil {
		t.Fatalf("SDK client from card: %v", err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c, card
}

// TestSDKInterop drives kfa with github.com/a2aproject/a2a-go/v2 v2.3.1
// over HTTP+JSON: card, ask with returnImmediately, get, list, cancel and
// a not-found error.
func TestSDKInterop(t *testing.T) {
	h := start(t, func(c *server.Config) { c.AskRate = 0 })
	ctx := context.Background()
	alice, _ := h.agent("alice")
	c, card := sdkClient(t, h, alice.Token)
	if len(card.Skills) != 3 || card.Skills[1].ID != "ask-network" || card.Skills[2].ID != "answer-feedback" || card.SecuritySchemes["bearer"] == nil {
		t.Fatalf("SDK view of the card: skills %d, schemes %v", len(card.Skills), card.SecuritySchemes)
	}

	msg := sdk.NewMessage(sdk.MessageRoleUser, sdk.NewDataPart(map[string]any{
		"action": "ask", "question": "How do I page through ListTasks results?",
	}))
	res, err := c.SendMessage(ctx, &sdk.SendMessageRequest{Message: msg, Config: &sdk.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatalf("SDK ask: %v", err)
	}
	task, ok := res.(*sdk.Task)
	if !ok || task.Status.State != sdk.TaskStateWorking || task.Status.Timestamp == nil {
		t.Fatalf("SDK ask result: %#v", res)
	}
	if task.Metadata["discussionId"] == "" {
		t.Fatalf("task metadata: %v", task.Metadata)
	}

	got, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID})
	if err != nil || got.ID != task.ID || got.Status.State != sdk.TaskStateWorking || len(got.History) != 1 {
		t.Fatalf("SDK get: %+v %v", got, err)
	}
	zero := 0
	got, err = c.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID, HistoryLength: &zero})
	if err != nil || len(got.History) != 0 {
		t.Fatalf("SDK get historyLength=0: %+v %v", got, err)
	}

	list, err := c.ListTasks(ctx, &sdk.ListTasksRequest{PageSize: 10, Status: sdk.TaskStateWorking})
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID || list.TotalSize != 1 {
		t.Fatalf("SDK list: %+v %v", list, err)
	}

	canceled, err := c.CancelTask(ctx, &sdk.CancelTaskRequest{ID: task.ID})
	if err != nil || canceled.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("SDK cancel: %+v %v", canceled, err)
	}

	_, err = c.GetTask(ctx, &sdk.GetTaskRequest{ID: "01JD0000000000000000000000"})
	if !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Fatalf("SDK get missing: %v, want ErrTaskNotFound", err)
	}
	// A completed task is not cancelable, as the SDK understands it.
	res, err = c.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewDataPart(map[string]any{
		"action": "ask", "question": "second question",
	})), Config: &sdk.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	second := res.(*sdk.Task)
	_, bob := h.agent("bob")
	if _, err := bob.Reply(ctx, second.Metadata["discussionId"].(string), "answer"); err != nil {
		t.Fatal(err)
	}
	done, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: second.ID})
	if err != nil || done.Status.State != sdk.TaskStateCompleted || len(done.Artifacts) != 1 {
		t.Fatalf("SDK view of the completed task: %+v %v", done, err)
	}
	_, err = c.CancelTask(ctx, &sdk.CancelTaskRequest{ID: second.ID})
	if !errors.Is(err, sdk.ErrTaskNotCancelable) {
		t.Fatalf("SDK cancel completed: %v, want ErrTaskNotCancelable", err)
	}
	// Without returnImmediately the SDK gets kfa's UnsupportedOperationError.
	_, err = c.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewDataPart(map[string]any{
		"action": "ask", "question": "blocking?",
	}))})
	if !errors.Is(err, sdk.ErrUnsupportedOperation) {
		t.Fatalf("SDK blocking ask: %v, want ErrUnsupportedOperation", err)
	}
}
