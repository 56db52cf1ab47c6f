package admin

import (
	"context"
	"errors"
	"mime"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/knowledge"
)

// Indexer is the search index as the admin API drives it. kfa serve passes
// the live index; the CLI without a server passes one that only deletes
// the index directory, for the next kfa serve to rebuild.
type Indexer interface {
	// Sync returns once every committed record write is searchable.
	Sync(ctx context.Context) error
	// Rebuild builds the index again from the records.
	Rebuild(ctx context.Context) (knowledge.IndexStatus, error)
}

// importType reports whether an import accepts the media type mt.
func importType(mt string) bool {
	switch mt {
	case "application/x-ndjson", "application/jsonl", "application/json-lines", "application/json", "text/plain":
		return true
	}
	return false
}

// importRecords streams a JSON Lines body into the records: POST
// /admin/v1/records:import?strict=true|false. The body is read as it
// arrives, in batches of transactions, so its size is not bounded; lines
// are (knowledge.MaxLineBytes). The answer is the import summary, once the
// imported records are searchable.
func (h *Handler) importRecords(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !importType(mt) {
			h.fail(w, r, a2a.Errorf(a2a.ContentTypeNotSupported,
				"content type %q is not an import: send JSON Lines as application/x-ndjson", ct))
			return
		}
	}
	var opts knowledge.ImportOptions
	var err error
	if opts.Strict, err = httpkit.QueryBool(r.URL.Query(), "strict"); err != nil {
		h.fail(w, r, err)
		return
	}
	sum, err := h.deps.Operator.ImportRecords(r.Context(), r.Body, opts)
	if err != nil {
		// The operator's own channel: the whole story, not a bare 500.
		h.fail(w, r, a2a.Errorf(a2a.Internal, "%v", err))
		return
	}
	if err := h.deps.Index.Sync(r.Context()); err != nil {
		h.fail(w, r, a2a.Errorf(a2a.Internal, "records imported, but the search index did not catch up: %v", err))
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, sum)
}

func (h *Handler) deleteRecord(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	if err := h.deps.Operator.DeleteRecord(r.Context(), id); err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.deps.Index.Sync(r.Context()); err != nil {
		h.fail(w, r, a2a.Errorf(a2a.Internal, "record deleted, but the search index did not catch up: %v", err))
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.DeleteRecordResponse{ID: id, Deleted: true})
}

func (h *Handler) reindexRecords(w http.ResponseWriter, r *http.Request) {
	st, err := h.deps.Index.Rebuild(r.Context())
	switch {
	case errors.Is(err, knowledge.ErrSynonyms):
		// The operator's file, not the server, is at fault; the index
		// stays as it was.
		h.fail(w, r, a2a.BadParam("synonyms", "%v; fix the file and run the reindex again (the index was left as it was)", err))
		return
	case err != nil:
		h.fail(w, r, a2a.Errorf(a2a.Internal, "reindex: %v", err))
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, st)
}

func (h *Handler) listRecords(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size, err := httpkit.QueryInt(q, "pageSize")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	after, err := httpkit.QueryStr(q, "after")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p, err := h.deps.Operator.ListRecords(r.Context(), after, size)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := api.RecordList{Records: make([]api.Record, len(p.Records)), NextAfter: p.Next, Total: p.Total}
	for i, rec := range p.Records {
		out.Records[i] = api.FromRecord(rec, false)
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
}

func (h *Handler) getRecord(w http.ResponseWriter, r *http.Request) {
	rec, err := h.deps.Operator.Record(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, api.FromRecord(rec, true))
}

// deleteRecords deletes a batch of records in one transaction and names
// the ids no record has: POST /admin/v1/records:delete. The answer comes
// once the search index has dropped them.
func (h *Handler) deleteRecords(w http.ResponseWriter, r *http.Request) {
	var req api.DeleteRecordsRequest
	if err := httpkit.ReadJSON(w, r, maxBody, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.deps.Operator.DeleteRecords(r.Context(), req.IDs)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.deps.Index.Sync(r.Context()); err != nil {
		h.fail(w, r, a2a.Errorf(a2a.Internal, "records deleted, but the search index did not catch up: %v", err))
		return
	}
	httpkit.WriteJSON(w, http.StatusOK, res)
}

// exportRecords streams the records as JSON Lines in the import format:
// GET /admin/v1/records:export?kind=&product=&environment=. A failure
// after the first bytes went out cuts the connection, so the client sees
// a broken stream, never a short one that looks whole.
func (h *Handler) exportRecords(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	o := knowledge.ExportOptions{Kind: q.Get("kind"), Product: q.Get("product"), Environment: q.Get("environment")}
	w.Header().Set("Content-Type", "application/x-ndjson")
	sw := &startedWriter{w: w}
	if _, err := h.deps.Operator.ExportRecords(r.Context(), sw, o); err != nil {
		if !sw.started {
			w.Header().Del("Content-Type")
			h.fail(w, r, a2a.Errorf(a2a.Internal, "export: %v", err))
			return
		}
		panic(http.ErrAbortHandler)
	}
}

// startedWriter tells whether anything was written.
type startedWriter struct {
	w       http.ResponseWriter
	started bool
}

func (s *startedWriter) Write(p []byte) (int, error) {
	s.started = true
	return s.w.Write(p)
}
