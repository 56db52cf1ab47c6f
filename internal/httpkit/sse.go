package httpkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
)

// SSE writes a Server-Sent Events response: one "data:" line of JSON per
// event, a blank line after each, and comment lines as heartbeats.
type SSE struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// StartSSE sends the headers of an event stream and lifts the server's
// write timeout for this response: a stream may stay open for hours.
func StartSSE(w http.ResponseWriter) *SSE {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // ask nginx not to buffer the stream
	h.Del("Content-Length")
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	s := &SSE{w: w, rc: rc}
	_ = s.flush()
	return s
}

// Data writes one event whose data is the JSON encoding of v.
func (s *SSE) Data(v any) error { return s.Event("", v) }

// Event writes one event with an id (none when id is empty) whose data is
// the JSON encoding of v. A client that reconnects sends the last id it
// got as Last-Event-ID.
func (s *SSE) Event(id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	// encoding/json escapes U+2028/2029 and never emits raw newlines, so
	// one line always holds the whole event.
	var buf bytes.Buffer
	buf.Grow(len(b) + len(id) + 16)
	if id = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == 0 {
			return -1
		}
		return r
	}, id); id != "" {
		buf.WriteString("id: ")
		buf.WriteString(id)
		buf.WriteByte('\n')
	}
	buf.WriteString("data: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	if _, err := s.w.Write(buf.Bytes()); err != nil {
		return err
	}
	return s.flush()
}

// Comment writes a comment line, which clients ignore: a heartbeat that
// keeps proxies from closing an idle stream.
func (s *SSE) Comment(text string) error {
	if _, err := s.w.Write([]byte(": " + text + "\n\n")); err != nil {
		return err
	}
	return s.flush()
}

func (s *SSE) flush() error {
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// Pump writes the events with send until events is closed (the stream
// ended), the client goes away (ctx), or a write fails, with a heartbeat
// comment after every idle interval. Closing the stream is the caller's.
func Pump[E any](ctx context.Context, sse *SSE, events <-chan E, heartbeat time.Duration, send func(E) error) {
	if heartbeat <= 0 {
		heartbeat = 15 * time.Second
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			if err := send(ev); err != nil {
				return
			}
			tick.Reset(heartbeat)
		case <-tick.C:
			if err := sse.Comment("keep-alive"); err != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}
