package e2e

import (
	"context"
	"errors"
	"iter"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"golang.org/x/oauth2/clientcredentials"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/oidctest"
	"github.com/kfa-project/kfa/server"
	"github.com/kfa-project/kfa/service"
)

// TestGoSDKOverGRPC: the official Go SDK v2.3.1 picks the gRPC interface
// from kfa's card and its a2agrpc transport calls every method of the
// service with a kfa_ token (as authorization, then as x-api-key) and with
// an OAuth access token from a real provider (internal/oidctest), each sent
// by the SDK's own AuthInterceptor as metadata: the extended card names the
// caller; a search; an ask, read back, listed and canceled; the push
// configs created, read, listed and deleted; a streamed ask that sees the
// reply another agent posts over HTTP, and a subscription that sees a
// cancel made over HTTP+JSON; and the errors the SDK maps back (a foreign
// task is not found, a terminal one cannot be subscribed to).
func TestGoSDKOverGRPC(t *testing.T) {
	p := oauthProvider(t, oidctest.Options{})
	h := startOAuth(t, p, func(c *server.Config) {
		withGRPC(c)
		c.PushAllow = []string{"127.0.0.1"}
	})
	ctx := context.Background()
	alice, _ := h.agent("alice")
	carol, _ := h.agent("carol")
	_, bob := h.agent("bob")

	card, err := agentcard.DefaultResolver.Resolve(ctx, h.url)
	if err != nil {
		t.Fatal(err)
	}
	// The card names the gRPC interface: the public URL's host, the
	// listener's port.
	_, port, _ := net.SplitHostPort(h.srv.GRPCAddr())
	u, _ := url.Parse(publicURL)
	want := net.JoinHostPort(u.Hostname(), port)
	i := slices.IndexFunc(card.SupportedInterfaces, func(i *sdk.AgentInterface) bool { return i.ProtocolBinding == sdk.TransportProtocolGRPC })
	if i < 0 || card.SupportedInterfaces[i].URL != want || card.SupportedInterfaces[i].ProtocolVersion != "1.0" {
		t.Fatalf("the card's gRPC interface: want %s, got %+v", want, card.SupportedInterfaces)
	}
	card.SupportedInterfaces[i].URL = h.srv.GRPCAddr() // the test's public host resolves nowhere
	oauthScheme, tokenURL := clientCredentialsScheme(t, card)
	// kfa's 1.0 card cannot carry requirements v2.3.1 reads (a2a-go issue
	// 430): the client adds them, as docs/api.md's recipe says.
	card.SecurityRequirements = sdk.SecurityRequirementsOptions{{"bearer": {}}, {"apiKey": {}}, {oauthScheme: {}}}

	newClient := func(t *testing.T, creds a2aclient.CredentialsService) *a2aclient.Client {
		t.Helper()
		c, err := a2aclient.NewFromCard(ctx, card,
			a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())),
			a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []sdk.TransportProtocol{sdk.TransportProtocolGRPC}}),
			a2aclient.WithCallInterceptors(&a2aclient.AuthInterceptor{Service: creds}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Destroy() })
		return c
	}
	// A call without a credential is challenged as on HTTP, pointing OAuth
	// clients at the protected resource metadata.
	gctx, cancel := grpcCtx("")
	defer cancel()
	var trailer metadata.MD
	_, err = h.grpcClient().GetTask(gctx, &a2apb.GetTaskRequest{Id: "01JD0000000000000000000000"}, grpc.Trailer(&trailer))
	if code, _ := grpcError(t, err); code != codes.Unauthenticated ||
		!strings.Contains(first(trailer.Get("www-authenticate")), `resource_metadata="`+publicURL+`/.well-known/oauth-protected-resource"`) {
		t.Fatalf("an anonymous GetTask: %v, challenge %q", err, trailer.Get("www-authenticate"))
	}

	kfaToken := a2aclient.NewInMemoryCredentialsStore()
	kfaToken.Set("s", "bearer", a2aclient.AuthCredential(alice.Token))
	apiKey := a2aclient.NewInMemoryCredentialsStore()
	apiKey.Set("s", "apiKey", a2aclient.AuthCredential(carol.Token))
	cc := clientcredentials.Config{ClientID: "svc", ClientSecret: "svc-secret", TokenURL: tokenURL, Scopes: []string{"read", "post"}}
	for _, tc := range []struct {
		name  string
		creds a2aclient.CredentialsService
		agent string
		owner *client.Client // the same agent over HTTP+JSON
	}{
		{"kfa_ token", kfaToken, "alice", h.anon.WithToken(alice.Token)},
		{"kfa_ token as x-api-key", apiKey, "carol", h.anon.WithToken(carol.Token)},
		{"OAuth access token", oauthCredentials{oauthScheme, cc.TokenSource(ctx)}, "build-bot", h.anon.WithToken(p.Token(t, "svc", "read", "post"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.creds)
			sdkMethods(t, h, c, a2aclient.AttachSessionID(ctx, "s"), tc.agent, tc.owner, bob)
		})
	}
}

// sdkMethods calls every method of the service through c, whose calls
// are agent's; owner is the same agent over HTTP+JSON, replier another
// agent.
func sdkMethods(t *testing.T, h *harness, c *a2aclient.Client, ctx context.Context, agent string, owner, replier *client.Client) {
	t.Helper()
	ext, err := c.GetExtendedAgentCard(ctx, &sdk.GetExtendedAgentCardRequest{})
	if err != nil {
		t.Fatalf("GetExtendedAgentCard: %v", err)
	}
	if !slices.ContainsFunc(ext.Capabilities.Extensions, func(e sdk.AgentExtension) bool {
		return e.URI == service.CallerExtensionURI && e.Params["name"] == agent
	}) {
		t.Fatalf("the extended card does not name %s: %+v", agent, ext.Capabilities.Extensions)
	}
	res, err := c.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("bbolt timeout"))})
	if m, ok := res.(*sdk.Message); err != nil || !ok || m.Role != sdk.MessageRoleAgent {
		t.Fatalf("search: %#v %v", res, err)
	}

	// An ask, read back, listed, its push configs, canceled.
	tk := sdkTask(t, c, ctx, "Asked over gRPC by "+agent)
	got, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: tk.ID})
	if err != nil || got.ID != tk.ID || got.Status.State != sdk.TaskStateWorking {
		t.Fatalf("GetTask: %+v %v", got, err)
	}
	if http := h.task(owner, string(tk.ID)); http.ID != string(tk.ID) {
		t.Fatalf("over HTTP+JSON the task is %+v", http)
	}
	list, err := c.ListTasks(ctx, &sdk.ListTasksRequest{PageSize: 100})
	if err != nil || !slices.ContainsFunc(list.Tasks, func(x *sdk.Task) bool { return x.ID == tk.ID }) {
		t.Fatalf("ListTasks: %+v %v", list, err)
	}
	cfg, err := c.CreateTaskPushConfig(ctx, &sdk.PushConfig{TaskID: tk.ID, URL: "http://127.0.0.1:9/hook", Token: "t1",
		Auth: &sdk.PushAuthInfo{Scheme: "Bearer", Credentials: "c1"}})
	if err != nil || cfg.ID == "" || cfg.URL != "http://127.0.0.1:9/hook" || cfg.Auth == nil || cfg.Auth.Scheme != "Bearer" {
		t.Fatalf("CreateTaskPushConfig: %+v %v", cfg, err)
	}
	if g, err := c.GetTaskPushConfig(ctx, &sdk.GetTaskPushConfigRequest{TaskID: tk.ID, ID: cfg.ID}); err != nil || g.ID != cfg.ID || g.Token != "t1" {
		t.Fatalf("GetTaskPushConfig: %+v %v", g, err)
	}
	if l, err := c.ListTaskPushConfigs(ctx, &sdk.ListTaskPushConfigRequest{TaskID: tk.ID}); err != nil || len(l) != 1 || l[0].ID != cfg.ID {
		t.Fatalf("ListTaskPushConfigs: %+v %v", l, err)
	}
	if err := c.DeleteTaskPushConfig(ctx, &sdk.DeleteTaskPushConfigRequest{TaskID: tk.ID, ID: cfg.ID}); err != nil {
		t.Fatalf("DeleteTaskPushConfig: %v", err)
	}
	if l, err := c.ListTaskPushConfigs(ctx, &sdk.ListTaskPushConfigRequest{TaskID: tk.ID}); err != nil || len(l) != 0 {
		t.Fatalf("ListTaskPushConfigs after the delete: %+v %v", l, err)
	}
	canceled, err := c.CancelTask(ctx, &sdk.CancelTaskRequest{ID: tk.ID})
	if err != nil || canceled.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("CancelTask: %+v %v", canceled, err)
	}
	if _, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: "01JD0000000000000000000000"}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Fatalf("GetTask of a missing task: %v", err)
	}
	nx, stopNx := iter.Pull2(c.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: tk.ID}))
	_, err, ok := nx()
	stopNx()
	if !ok || !errors.Is(err, sdk.ErrUnsupportedOperation) {
		t.Fatalf("SubscribeToTask of a canceled task: %v (an answer: %v)", err, ok)
	}

	// A streamed ask sees the reply another agent posts over HTTP.
	next, stop := iter.Pull2(c.SendStreamingMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser,
		sdk.NewDataPart(map[string]any{"action": "ask", "question": "Streamed over gRPC by " + agent}))}))
	defer stop()
	first, ok := sdkNext(t, next).(*sdk.Task)
	if !ok || first.Status.State != sdk.TaskStateWorking {
		t.Fatalf("the stream's first event: %#v", first)
	}
	disc, _ := first.Metadata["discussionId"].(string)
	if _, err := replier.Reply(ctx, disc, "Answered over HTTP while "+agent+" streams over gRPC."); err != nil {
		t.Fatal(err)
	}
	art, ok := sdkNext(t, next).(*sdk.TaskArtifactUpdateEvent)
	if !ok || art.TaskID != first.ID || len(art.Artifact.Parts) == 0 {
		t.Fatalf("after the reply: %#v", art)
	}
	done, ok := sdkNext(t, next).(*sdk.TaskStatusUpdateEvent)
	if !ok || done.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("the last event: %#v", done)
	}
	if ev, err, more := next(); more {
		t.Fatalf("the stream goes on after the task completed: %#v %v", ev, err)
	}

	// A subscription sees a cancel made over HTTP+JSON.
	sub := sdkTask(t, c, ctx, "Subscribed to over gRPC by "+agent)
	next2, stop2 := iter.Pull2(c.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: sub.ID}))
	defer stop2()
	if cur, ok := sdkNext(t, next2).(*sdk.Task); !ok || cur.ID != sub.ID {
		t.Fatalf("the subscription's first event: %#v", cur)
	}
	if _, err := owner.CancelTask(ctx, string(sub.ID)); err != nil {
		t.Fatal(err)
	}
	if ev, ok := sdkNext(t, next2).(*sdk.TaskStatusUpdateEvent); !ok || ev.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("after the cancel over HTTP+JSON: %#v", ev)
	}
}

// sdkTask asks through c and returns the task.
func sdkTask(t *testing.T, c *a2aclient.Client, ctx context.Context, question string) *sdk.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, &sdk.SendMessageRequest{
		Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewDataPart(map[string]any{"action": "ask", "question": question})),
		Config:  &sdk.SendMessageConfig{ReturnImmediately: true},
	})
	tk, ok := res.(*sdk.Task)
	if err != nil || !ok || tk.Status.State != sdk.TaskStateWorking {
		t.Fatalf("ask: %#v %v", res, err)
	}
	return tk
}

// sdkNext reads the next event of a stream, failing on an error or the
// end.
func sdkNext(t *testing.T, next func() (sdk.Event, error, bool)) sdk.Event {
	t.Helper()
	ev, err, ok := next()
	if !ok {
		t.Fatal("the stream ended early")
	}
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	return ev
}
