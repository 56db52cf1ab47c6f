package e2e

import (
	"context"
	"errors"
	"net/http"
	"testing"

	sdk03 "github.com/a2aproject/a2a-go/a2a"
	client03 "github.com/a2aproject/a2a-go/a2aclient"
	sdk "github.com/a2aproject/a2a-go/v2/a2a"
)

// TestSDKPushConfigs: the official Go SDK v2.3.1 creates, gets, lists and
// deletes push notification configs over HTTP+JSON and JSON-RPC; another
// agent's task is a missing one to it.
func TestSDKPushConfigs(t *testing.T) {
	h := start(t, nil)
	ctx := context.Background()
	alice, ac := h.agent("alice")
	bob, _ := h.agent("bob")
	for _, binding := range []sdk.TransportProtocol{sdk.TransportProtocolHTTPJSON, sdk.TransportProtocolJSONRPC} {
		t.Run(string(binding), func(t *testing.T) {
			c := sdkClientVia(t, h, alice.Token, binding)
			task := h.ask(ac, "m-"+string(binding), "configs over "+string(binding))
			tid := sdk.TaskID(task.ID)
			made, err := c.CreateTaskPushConfig(ctx, &sdk.PushConfig{TaskID: tid, URL: "https://hooks.example.com/sdk",
				Token: "sdk-token", Auth: &sdk.PushAuthInfo{Scheme: "Bearer", Credentials: "sdk-cred"}})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if made.ID == "" || made.TaskID != tid || made.URL != "https://hooks.example.com/sdk" || made.Token != "sdk-token" ||
				made.Auth == nil || made.Auth.Scheme != "Bearer" {
				t.Fatalf("created: %+v", made)
			}
			named, err := c.CreateTaskPushConfig(ctx, &sdk.PushConfig{TaskID: tid, ID: "second", URL: "https://hooks.example.com/2"})
			if err != nil || named.ID != "second" {
				t.Fatalf("create with an id: %+v %v", named, err)
			}
			got, err := c.GetTaskPushConfig(ctx, &sdk.GetTaskPushConfigRequest{TaskID: tid, ID: made.ID})
			if err != nil || got.ID != made.ID || got.URL != made.URL {
				t.Fatalf("get: %+v %v", got, err)
			}
			list, err := c.ListTaskPushConfigs(ctx, &sdk.ListTaskPushConfigRequest{TaskID: tid})
			if err != nil || len(list) != 2 {
				t.Fatalf("list: %+v %v", list, err)
			}
			if err := c.DeleteTaskPushConfig(ctx, &sdk.DeleteTaskPushConfigRequest{TaskID: tid, ID: made.ID}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if err := c.DeleteTaskPushConfig(ctx, &sdk.DeleteTaskPushConfigRequest{TaskID: tid, ID: made.ID}); err != nil {
				t.Fatalf("delete again: %v", err)
			}
			if _, err := c.GetTaskPushConfig(ctx, &sdk.GetTaskPushConfigRequest{TaskID: tid, ID: made.ID}); !errors.Is(err, sdk.ErrTaskNotFound) {
				t.Fatalf("get deleted: %v", err)
			}
			if list, err := c.ListTaskPushConfigs(ctx, &sdk.ListTaskPushConfigRequest{TaskID: tid}); err != nil || len(list) != 1 {
				t.Fatalf("list after delete: %+v %v", list, err)
			}
			other := sdkClientVia(t, h, bob.Token, binding)
			if _, err := other.ListTaskPushConfigs(ctx, &sdk.ListTaskPushConfigRequest{TaskID: tid}); !errors.Is(err, sdk.ErrTaskNotFound) {
				t.Fatalf("another agent's task: %v", err)
			}
			if _, err := c.CreateTaskPushConfig(ctx, &sdk.PushConfig{TaskID: tid, URL: "https://127.0.0.1/x"}); !errors.Is(err, sdk.ErrInvalidParams) {
				t.Fatalf("a loopback URL: %v", err)
			}
		})
	}
}

// TestSDK03PushConfigs: the official 0.3 Go client sets, gets, lists and
// deletes configs with the 0.3 method names and shapes.
func TestSDK03PushConfigs(t *testing.T) {
	h := start(t, nil)
	ctx := context.Background()
	alice, ac := h.agent("alice")
	hc := &http.Client{Transport: bearerTransport{token: alice.Token}}
	c, err := client03.NewFromEndpoints(ctx,
		[]sdk03.AgentInterface{{Transport: sdk03.TransportProtocolJSONRPC, URL: h.url + "/a2a/jsonrpc"}},
		client03.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	task := h.ask(ac, "m-03", "configs over 0.3")
	tid := sdk03.TaskID(task.ID)
	set, err := c.SetTaskPushConfig(ctx, &sdk03.TaskPushConfig{TaskID: tid, Config: sdk03.PushConfig{
		URL: "https://hooks.example.com/03", Auth: &sdk03.PushAuthInfo{Schemes: []string{"Bearer"}, Credentials: "c"}}})
	if err != nil || set.Config.ID == "" || set.TaskID != tid || set.Config.Auth == nil || set.Config.Auth.Schemes[0] != "Bearer" {
		t.Fatalf("set: %+v %v", set, err)
	}
	got, err := c.GetTaskPushConfig(ctx, &sdk03.GetTaskPushConfigParams{TaskID: tid, ConfigID: set.Config.ID})
	if err != nil || got.Config.URL != "https://hooks.example.com/03" {
		t.Fatalf("get: %+v %v", got, err)
	}
	// Without a config id, the task's only config.
	if got, err := c.GetTaskPushConfig(ctx, &sdk03.GetTaskPushConfigParams{TaskID: tid}); err != nil || got.Config.ID != set.Config.ID {
		t.Fatalf("get without an id: %+v %v", got, err)
	}
	list, err := c.ListTaskPushConfig(ctx, &sdk03.ListTaskPushConfigParams{TaskID: tid})
	if err != nil || len(list) != 1 || list[0].Config.ID != set.Config.ID {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := c.DeleteTaskPushConfig(ctx, &sdk03.DeleteTaskPushConfigParams{TaskID: tid, ConfigID: set.Config.ID}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if list, err := c.ListTaskPushConfig(ctx, &sdk03.ListTaskPushConfigParams{TaskID: tid}); err != nil || len(list) != 0 {
		t.Fatalf("list after delete: %+v %v", list, err)
	}
}
