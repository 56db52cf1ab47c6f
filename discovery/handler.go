package discovery

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// Deps are what the discovery handlers need.
type Deps struct {
	// Service makes the cards, the guides and the info, and signs the card.
	Service *service.Service
	Log     *slog.Logger
	// CardMaxAge is the Cache-Control max-age of the cards and guides;
	// default 5 minutes.
	CardMaxAge time.Duration
	// JWKS, when set, answers GET /.well-known/jwks.json: the public keys
	// that verify the signatures of push notifications.
	JWKS func(ctx context.Context) ([]byte, error)
}

// Handler serves the discovery routes. Build it with New.
type Handler struct{ deps Deps }

// New returns the handler.
func New(deps Deps) *Handler {
	if deps.CardMaxAge <= 0 {
		deps.CardMaxAge = 5 * time.Minute
	}
	return &Handler{deps: deps}
}

// HasJWKS reports whether the JWKS route is served.
func (h *Handler) HasJWKS() bool { return h.deps.JWKS != nil }

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	httpkit.WriteError(w, r, h.deps.Log, err, service.ToError(err))
}

// maxAge is the Cache-Control value of the cards and guides.
func (h *Handler) maxAge() string {
	return "public, max-age=" + strconv.Itoa(int(h.deps.CardMaxAge.Seconds()))
}
