package admin

import (
	"github.com/kfa-project/kfa/moderation"
	"net/http"

	"github.com/gorilla/mux"
)

// routes registers every route of the admin socket: its one table (the
// public listener's is server/routes.go).
func (h *Handler) routes(r *mux.Router) {
	get, post := http.MethodGet, http.MethodPost
	r.HandleFunc("/admin/v1/ping", h.ping).Methods(get)

	// Agents, their inboxes, and the replies posted as one.
	r.HandleFunc("/admin/v1/agents", h.listAgents).Methods(get)
	r.HandleFunc("/admin/v1/agents", h.createAgent).Methods(post)
	r.HandleFunc("/admin/v1/agents/{id}/rotate", h.rotateAgent).Methods(post)
	r.HandleFunc("/admin/v1/agents/{id}/revoke", h.revokeAgent).Methods(post)
	r.HandleFunc("/admin/v1/agents/{id}/link", h.linkAgent).Methods(post)
	r.HandleFunc("/admin/v1/agents/{id}/inbox", h.inbox).Methods(get)

	// Every agent's tasks, and the operator cancel.
	r.HandleFunc("/admin/v1/tasks", h.listTasks).Methods(get)
	r.HandleFunc("/admin/v1/tasks/{id}", h.getTask).Methods(get)
	r.HandleFunc("/admin/v1/tasks/{id}/cancel", h.cancelTask).Methods(post)

	// Discussions, and the reply an operator posts on behalf of an agent.
	r.HandleFunc("/admin/v1/discussions", h.listDiscussions).Methods(get)
	r.HandleFunc("/admin/v1/discussions/{id}", h.getDiscussion).Methods(get)
	r.HandleFunc("/admin/v1/discussions/{id}/replies", h.replyAs).Methods(post)

	// Moderation: the review queue, hide, unhide and dismiss, the log,
	// and everything an agent wrote.
	r.HandleFunc("/admin/v1/moderation/queue", h.moderationQueue).Methods(get)
	r.HandleFunc("/admin/v1/moderation/log", h.moderationLog).Methods(get)
	r.HandleFunc("/admin/v1/moderation/hide", h.moderate(moderation.ActionHide)).Methods(post)
	r.HandleFunc("/admin/v1/moderation/unhide", h.moderate(moderation.ActionUnhide)).Methods(post)
	r.HandleFunc("/admin/v1/moderation/dismiss", h.moderate(moderation.ActionDismiss)).Methods(post)
	r.HandleFunc("/admin/v1/agents/{id}/hide-content", h.hideAuthor).Methods(post)

	// The database: stats, check and backup.
	r.HandleFunc("/admin/v1/stats", h.needStore(h.stats)).Methods(get)
	r.HandleFunc("/admin/v1/check", h.needStore(h.check)).Methods(get)
	r.HandleFunc("/admin/v1/backup", h.needStore(h.backup)).Methods(get)

	// The records and their index.
	r.HandleFunc("/admin/v1/records", h.listRecords).Methods(get)
	r.HandleFunc("/admin/v1/records:import", h.importRecords).Methods(post)
	r.HandleFunc("/admin/v1/records:reindex", h.reindexRecords).Methods(post)
	r.HandleFunc("/admin/v1/records:export", h.exportRecords).Methods(get)
	r.HandleFunc("/admin/v1/records:delete", h.deleteRecords).Methods(post)
	r.HandleFunc("/admin/v1/records/{id}", h.getRecord).Methods(get)
	r.HandleFunc("/admin/v1/records/{id}:delete", h.deleteRecord).Methods(post)

	// Push notifications: the outbox and the signing keys.
	r.HandleFunc("/admin/v1/push/deliveries", h.listDeliveries).Methods(get)
	r.HandleFunc("/admin/v1/push/deliveries/{id}/retry", h.retryDelivery).Methods(post)
	r.HandleFunc("/admin/v1/push/keys", h.listKeys).Methods(get)
	r.HandleFunc("/admin/v1/push/keys/rotate", h.rotateKey).Methods(post)

	// Peers (federation).
	r.HandleFunc("/admin/v1/peers", h.listPeers).Methods(get)
	r.HandleFunc("/admin/v1/peers", h.addPeer).Methods(post)
	r.HandleFunc("/admin/v1/peers/{name}/pause", h.pausePeer).Methods(post)
	r.HandleFunc("/admin/v1/peers/{name}/resume", h.resumePeer).Methods(post)
	r.HandleFunc("/admin/v1/peers/{name}/remove", h.removePeer).Methods(post)

	// MCP for kfa mcp (stdio), while the server holds the database.
	if h.deps.MCP != nil {
		r.Handle("/admin/v1/mcp", h.deps.MCP)
	}
}
