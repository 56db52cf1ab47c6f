package httpkit

import "net/http"

// Private marks the answers of next as depending on the caller's
// credential: never cached by shared caches, and never given wildcard
// CORS.
func Private(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, no-store")
		w.Header().Add("Vary", "Authorization, X-API-Key")
		next.ServeHTTP(w, r)
	})
}

// PublicRead marks an anonymous, credential-free answer: shareable by
// caches for a few seconds and readable from any web origin.
func PublicRead(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "public, max-age=5")
	w.Header().Set("Access-Control-Allow-Origin", "*")
}

// Preflight answers the CORS preflight of the anonymous, credential-free
// routes (the cards, /a2a/info and the public discussion reads) only.
func Preflight(w http.ResponseWriter, _ *http.Request) {
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
	hd.Set("Access-Control-Allow-Headers", "If-None-Match, If-Modified-Since, A2A-Version")
	hd.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}
