package httpjson

import (
	"net/http"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/internal/httpkit"
)

// requireVersion enforces A2A-Version: 1.0 on the HTTP+JSON binding. An
// absent or empty value means 0.3, which this binding does not serve.
func (h *Binding) requireVersion(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, present := r.Header[http.CanonicalHeaderKey(a2a.VersionHeader)]
		v := ""
		if present && len(raw) > 0 {
			v = raw[0]
		} else if q := r.URL.Query().Get(a2a.VersionHeader); q != "" {
			v = q
		}
		switch nv := a2a.NormalizeVersion(v); {
		case nv == a2a.Version10:
			next.ServeHTTP(w, r)
		case v == "":
			h.fail(w, r, a2a.Errorf(a2a.VersionNotSupported,
				"missing A2A-Version header: an absent version means 0.3, which this HTTP+JSON endpoint does not serve; send A2A-Version: 1.0").
				With("supportedVersions", a2a.Version10))
		default:
			h.fail(w, r, a2a.Errorf(a2a.VersionNotSupported,
				"A2A-Version %q is not supported here; send A2A-Version: 1.0", httpkit.Truncate(v, 32)).
				With("supportedVersions", a2a.Version10))
		}
	})
}
