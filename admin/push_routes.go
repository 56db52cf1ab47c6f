package admin

import (
	"context"
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/signing"
)

// PushOps are the operator's handles on push notifications: the outbox
// and the signing keys.
type PushOps interface {
	Deliveries(ctx context.Context, q push.DeliveryQuery) (push.DeliveryPage, error)
	// Retry makes a failed delivery pending again, due now.
	Retry(ctx context.Context, id string) (push.Delivery, error)
	// RotateKey makes a new current signing key.
	RotateKey(ctx context.Context) (signing.KeyInfo, error)
	Keys(ctx context.Context) ([]signing.KeyInfo, error)
}

// pushRoutes are the outbox and the signing keys.
func (h *Handler) pushRoutes(r *mux.Router) {
	r.HandleFunc("/admin/v1/push/deliveries", h.needPush(h.listDeliveries)).Methods(http.MethodGet)
	r.HandleFunc("/admin/v1/push/deliveries/{id}/retry", h.needPush(h.retryDelivery)).Methods(http.MethodPost)
	r.HandleFunc("/admin/v1/push/keys", h.needPush(h.listKeys)).Methods(http.MethodGet)
	r.HandleFunc("/admin/v1/push/keys/rotate", h.needPush(h.rotateKey)).Methods(http.MethodPost)
}

func (h *Handler) needPush(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if h.deps.Push == nil {
			h.fail(w, r, a2a.Errorf(a2a.Unavailable, "%s is not available: this admin handler has no push outbox", r.URL.Path))
			return
		}
		next(w, r)
	}
}

// listDeliveries lists deliveries, newest first. Query: state (pending,
// delivered, failed), taskId, pageSize (1-100, default 50), pageToken.
func (h *Handler) listDeliveries(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var state, taskID, after string
	for _, f := range []struct {
		name string
		dst  *string
	}{{"state", &state}, {"taskId", &taskID}, {"pageToken", &after}} {
		v, err := httpkit.QueryStr(q, f.name)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		*f.dst = v
	}
	size, err := httpkit.QueryInt(q, "pageSize")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	dq, err := push.NewDeliveryQuery(state, taskID, size, after)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := h.deps.Push.Deliveries(r.Context(), dq)
	if errors.Is(err, push.ErrDeliveryNotFound) {
		err = a2a.BadParam("pageToken", "is not a delivery id of this outbox")
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.DeliveryList{Deliveries: make([]api.Delivery, len(page.Deliveries)), NextPageToken: page.Next}
	for i, d := range page.Deliveries {
		out.Deliveries[i] = api.FromDelivery(d)
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

func (h *Handler) retryDelivery(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	d, err := h.deps.Push.Retry(r.Context(), id)
	switch {
	case errors.Is(err, push.ErrDeliveryNotFound):
		err = a2a.Errorf(a2a.NotFound, "no delivery %s in the outbox", httpkit.Truncate(id, 64))
	case errors.Is(err, push.ErrNotFailed):
		err = a2a.Errorf(a2a.UnsupportedOperation, "delivery %s has not failed: only a failed delivery is retried", httpkit.Truncate(id, 64))
	case errors.Is(err, push.ErrNotFound):
		err = a2a.Errorf(a2a.UnsupportedOperation, "delivery %s cannot be retried: its config was deleted", httpkit.Truncate(id, 64))
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromDelivery(d))
}

func (h *Handler) listKeys(w http.ResponseWriter, r *http.Request) {
	keys, err := h.deps.Push.Keys(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.SigningKeyList{Keys: make([]api.SigningKey, len(keys))}
	for i, k := range keys {
		out.Keys[i] = api.FromKey(k)
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

func (h *Handler) rotateKey(w http.ResponseWriter, r *http.Request) {
	k, err := h.deps.Push.RotateKey(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromKey(k))
}
