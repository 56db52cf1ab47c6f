package admin

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
)

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
	page, err := h.deps.Operator.Deliveries(r.Context(), state, taskID, size, after)
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
	d, err := h.deps.Operator.RetryDelivery(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromDelivery(d))
}

func (h *Handler) listKeys(w http.ResponseWriter, r *http.Request) {
	keys, err := h.deps.Operator.SigningKeys(r.Context())
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
	k, err := h.deps.Operator.RotateSigningKey(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromKey(k))
}
