package metrics

import (
	"net/http"
	"strconv"
	"time"
)

// Unmatched is the route label of requests that match no route.
const Unmatched = "unmatched"

// Instrument counts and times every request next serves. route names the
// route template a request matches ("" for none), so that labels do not
// grow with ids.
func (m *Metrics) Instrument(next http.Handler, route func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		label := Unmatched
		if t := route(r); t != "" {
			label = t
		}
		m.inFlight.Inc()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			m.inFlight.Dec()
			method := methodLabel(r.Method)
			m.requests.WithLabelValues(label, method, strconv.Itoa(rec.status)).Inc()
			m.duration.WithLabelValues(label, method).Observe(time.Since(start).Seconds())
			if rec.status == http.StatusTooManyRequests {
				m.rateLimited.WithLabelValues(label).Inc()
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// methodLabel keeps the method label to the methods kfa serves, so a
// client cannot grow it with made-up methods.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete,
		http.MethodPatch, http.MethodOptions:
		return m
	}
	return "OTHER"
}

// statusRecorder notes the status code of a response.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and deadlines (SSE).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
