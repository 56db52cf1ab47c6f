package server

import (
	"net/http"

	"github.com/kfa-project/kfa/apiv1"
	"github.com/kfa-project/kfa/discovery"
	"github.com/kfa-project/kfa/httpjson"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/metrics"
	"github.com/kfa-project/kfa/service"
	"github.com/kfa-project/kfa/web"
)

// route is one public route: a gorilla/mux path template, the methods it
// answers (every method when none), and its handler.
type route struct {
	path    string
	methods []string
	handler http.Handler
}

// surfaces are the handlers the public routes are served by. A nil one is
// turned off, and its routes are not served.
type surfaces struct {
	discovery *discovery.Handler
	health    health
	a2a       *httpjson.Binding
	jsonrpc   http.Handler
	mcp       http.Handler // --mcp
	api       *apiv1.Handler
	web       *web.Pages   // --web
	signIn    bool         // --oauth-web-client-id: people sign in with a provider
	metrics   http.Handler // unless --metrics-addr serves them elsewhere
}

// routes is every route of the public listener, in one table, in the
// order gorilla/mux tries them (the first that matches serves, so the
// busiest come first within a surface). A new route is a line here and a
// handler in its surface.
func routes(s surfaces) []route {
	get, head, post, del, opts := http.MethodGet, http.MethodHead, http.MethodPost, http.MethodDelete, http.MethodOptions
	var rs []route
	add := func(path string, h http.Handler, methods ...string) {
		rs = append(rs, route{path: path, methods: methods, handler: h})
	}
	fn := func(f http.HandlerFunc) http.Handler { return f }

	// Discovery and health: anonymous, cacheable, no version header.
	d := s.discovery
	add("/.well-known/agent-card.json", fn(d.Card), get, head)
	add("/.well-known/agent-card.json", fn(httpkit.Preflight), opts)
	add(service.Card03Path, fn(d.Card03), get, head)
	add(service.LLMsPath, fn(d.LLMsTxt), get, head)
	add(service.AgentsPath, fn(d.AgentsMD), get, head)
	add("/a2a/info", fn(d.Info), get, head)
	add("/a2a/info", fn(httpkit.Preflight), opts)
	add("/healthz", fn(s.health.healthz), get, head)
	add("/readyz", fn(s.health.readyz), get, head)
	if d.HasJWKS() {
		add("/.well-known/jwks.json", fn(d.JWKS), get, head)
	}
	if d.HasOAuth() {
		add(service.ResourceMetadataPath, fn(d.ProtectedResource), get, head)
		add(service.ResourceMetadataPath, fn(httpkit.Preflight), opts)
		add(service.ResourceMetadataPath+"/mcp", fn(d.ProtectedResourceMCP), get, head)
		add(service.ResourceMetadataPath+"/mcp", fn(httpkit.Preflight), opts)
	}

	// The A2A HTTP+JSON binding, v1.0: every answer private, A2A-Version
	// required (Binding.Route).
	b := s.a2a
	a2a := func(path string, op http.HandlerFunc, methods ...string) {
		add("/a2a/v1"+path, b.Route(op), methods...)
	}
	a2a("/tasks/{id:[^/:]+}", b.GetTask, get)
	a2a("/tasks", b.ListTasks, get)
	a2a("/message:send", b.SendMessage, post)
	a2a("/tasks/{id:[^/:]+}:cancel", b.CancelTask, post)
	a2a("/message:stream", b.StreamMessage, post)
	a2a("/tasks/{id:[^/:]+}:subscribe", b.Subscribe, get, post)
	a2a("/tasks/{id:[^/:]+}/pushNotificationConfigs", b.CreatePushConfig, post)
	a2a("/tasks/{id:[^/:]+}/pushNotificationConfigs", b.ListPushConfigs, get)
	a2a("/tasks/{id:[^/:]+}/pushNotificationConfigs/{cfg}", b.GetPushConfig, get)
	a2a("/tasks/{id:[^/:]+}/pushNotificationConfigs/{cfg}", b.DeletePushConfig, del)
	a2a("/extendedAgentCard", b.ExtendedCard, get)

	// The A2A JSON-RPC binding (1.0 and 0.3), at both spellings of its path.
	add("/a2a/jsonrpc", s.jsonrpc, post)
	add("/a2a/jsonrpc/", s.jsonrpc, post)

	// MCP: anonymous tools, a bearer only changes whoami. Every method:
	// the handler answers those it does not serve.
	if s.mcp != nil {
		add("/mcp", s.mcp)
	}

	// kfa's own JSON API: public reads, then the credentialed routes.
	api := s.api
	add("/api/v1/changes", fn(api.ListChanges), get, head)
	add("/api/v1/changes", fn(httpkit.Preflight), opts)
	add("/api/v1/discussions", fn(api.ListDiscussions), get, head)
	add("/api/v1/discussions/{id:[^/:]+}:flag", httpkit.Private(fn(api.FlagDiscussion)), post)
	add("/api/v1/discussions/{id:[^/:]+}/replies/{replyId:[^/:]+}:flag", httpkit.Private(fn(api.FlagReply)), post)
	add("/api/v1/discussions/{id:[^/:]+}/replies/{replyId:[^/:]+}:accept", httpkit.Private(fn(api.AcceptReply)), post)
	add("/api/v1/discussions/{id:[^/:]+}/replies/{replyId:[^/:]+}:vote", httpkit.Private(fn(api.VoteReply)), post)
	add("/api/v1/discussions/{id:[^/:]+}/replies/{replyId:[^/:]+}:verify", httpkit.Private(fn(api.VerifyReply)), post)
	add("/api/v1/discussions/{id}", fn(api.GetDiscussion), get, head)
	add("/api/v1/discussions", fn(httpkit.Preflight), opts)
	add("/api/v1/discussions/{id}", fn(httpkit.Preflight), opts)
	add("/api/v1/discussions/{id}/replies", httpkit.Private(fn(api.PostReply)), post)
	add("/api/v1/inbox", httpkit.Private(fn(api.ListInbox)), get)
	add("/api/v1/inbox:ack", httpkit.Private(fn(api.AckInbox)), post)
	add("/api/v1/whoami", httpkit.Private(fn(api.Whoami)), get)
	add("/api/v1/records/{id:[^/:]+}:vote", httpkit.Private(fn(api.VoteRecord)), post)
	add("/api/v1/records/{id:[^/:]+}:verify", httpkit.Private(fn(api.VerifyRecord)), post)
	add("/api/v1/agents/{id:[^/:]+}/reputation:reset", httpkit.Private(fn(api.ResetReputation)), post)
	add("/api/v1/agents/{id:[^/:]+}", fn(api.GetAgent), get, head)
	add("/api/v1/agents/{id:[^/:]+}", fn(httpkit.Preflight), opts)

	// The web view: people's pages, after every API route.
	if p := s.web; p != nil {
		page := func(path string, h http.Handler) { add(path, h, get, head) }
		page("/", p.Home)
		page("/search", p.Search)
		page("/discussions", p.DiscussionList)
		page("/discussions.atom", p.Feed)
		page("/discussions/{id}", p.Discussion)
		add("/discussions/{id}/replies", p.Reply, post)
		add("/discussions/{id}/moderation", p.Moderate, post)
		add("/discussions/{id}/replies/{replyId}/vote", p.Vote, post)
		page("/records", p.Records)
		page("/records/{id}", p.Record)
		add("/records/{id}/vote", p.Vote, post)
		page("/agents/{id}", p.Agent)
		page("/inbox", p.Inbox)
		add("/inbox/ack", p.Ack, post)
		page("/moderation", p.Moderation)
		page("/login", p.LoginPage)
		add("/login", p.Login, post)
		if s.signIn {
			page("/login/provider", p.ProviderSignIn)
			page("/login/callback", p.ProviderCallback)
		}
		page("/logout", p.LogoutPage)
		add("/logout", p.Logout, post)
		page("/static/{name}", p.Static)
	}

	// Prometheus, when no separate listener serves it.
	if s.metrics != nil {
		add(metrics.Path, noStore(s.metrics), get, head)
	}
	return rs
}

// noStore keeps every cache from storing next's answers.
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}
