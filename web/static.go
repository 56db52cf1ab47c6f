package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
)

//go:embed static
var staticFiles embed.FS

// assets are the embedded static files, served under names that carry a
// hash of their content, so that they can be cached for good: a new build
// with a changed file links to a new name.
type assets struct {
	CSS  string // path of the stylesheet
	Icon string // path of the icon
	JS   string // path of the script
	// files maps a served name to its content and type.
	files map[string]asset
}

type asset struct {
	body        []byte
	contentType string
}

func loadAssets() (assets, error) {
	as := assets{files: map[string]asset{}}
	for _, f := range []struct {
		file, contentType string
		dst               *string
	}{
		{"kfa.css", "text/css; charset=utf-8", &as.CSS},
		{"icon.svg", "image/svg+xml", &as.Icon},
		{"kfa.js", "text/javascript; charset=utf-8", &as.JS},
	} {
		b, err := staticFiles.ReadFile("static/" + f.file)
		if err != nil {
			return assets{}, fmt.Errorf("web: read static file %s: %w", f.file, err)
		}
		sum := sha256.Sum256(b)
		ext := path.Ext(f.file)
		name := strings.TrimSuffix(f.file, ext) + "." + hex.EncodeToString(sum[:5]) + ext
		as.files[name] = asset{body: b, contentType: f.contentType}
		*f.dst = "/static/" + name
	}
	return as, nil
}

// static serves an embedded file by its hashed name.
func (h *Handler) static(w http.ResponseWriter, r *http.Request) {
	a, ok := h.assets.files[pathVar(r, "name")]
	if !ok {
		h.notFound(w, r, visitor{}, "There is no such file.")
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("Content-Length", strconv.Itoa(len(a.body)))
	hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	hd.Del("Vary")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(a.body)
}
