package httpjson

import (
	"net/http"
	"sync"

	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/service"
)

// Response buffers of the answers built as bytes (GetTask, ListTasks),
// reused across requests: a page of tasks is tens of kilobytes.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// maxPooledBuffer keeps the odd huge answer from pinning its buffer.
const maxPooledBuffer = 1 << 20

func getBuffer() *[]byte { return buffers.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) > maxPooledBuffer {
		return
	}
	*b = (*b)[:0]
	buffers.Put(b)
}

// fail writes err as an A2A error response.
func (h *Binding) fail(w http.ResponseWriter, r *http.Request, err error) {
	httpkit.WriteError(w, r, h.deps.Log, err, service.ToError(err))
}

// readJSON reads a bounded JSON body into v: the Content-Type must be JSON,
// the body well-formed, valid UTF-8, without duplicate keys, and an object.
func (h *Binding) readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	return httpkit.ReadJSON(w, r, h.deps.MaxBodyBytes, v)
}

func (h *Binding) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return httpkit.ReadBody(w, r, h.deps.MaxBodyBytes)
}

// caller resolves the request's credential through the service, and
// tells the access log which agent called.
func (h *Binding) caller(r *http.Request, required bool) (service.Caller, error) {
	tok, sent, err := httpkit.Credential(r)
	c, err := h.deps.Service.Authenticate(r.Context(),
		service.Credential{Token: tok, Sent: sent, Err: err, Addr: httpkit.ClientAddr(r)}, required)
	if c.Agent != nil {
		httpkit.NoteAgent(r.Context(), c.Agent.ID)
	}
	return c, err
}
