package api

import "github.com/kfa-project/kfa/knowledge"

// The requests and answers of the admin channel's agent, ping and record
// routes: shared by the admin API that answers them and the client that
// sends them, which needs these shapes and nothing of the server.

// Ping identifies the process answering the admin channel.
type Ping struct {
	Version string `json:"version"`
	DataDir string `json:"dataDir"`
	PID     int    `json:"pid"`
	Mode    string `json:"mode"`
	Time    string `json:"time"`
	// Store is where the process keeps its data (absent when it has no
	// store, or could not read its id).
	Store *StoreIdentity `json:"store,omitempty"`
}

// StoreIdentity says where a server keeps its data, so that a command
// given --store can tell whether the server answering on the admin socket
// uses that database.
type StoreIdentity struct {
	// Backend is BackendBBolt or BackendPostgres.
	Backend string `json:"backend"`
	// Name is the bbolt file, or postgres://host:port/database (never a
	// user or a password).
	Name string `json:"name"`
	// ID is the change log's epoch: the same for every process on one
	// database, different for every database.
	ID string `json:"id"`
}

// CreateAgentRequest is the body of POST /admin/v1/agents.
type CreateAgentRequest struct {
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
	// AllowDuplicateName lets the agent share its name with another; a
	// name another agent has is refused otherwise.
	AllowDuplicateName bool `json:"allowDuplicateName,omitempty"`
}

// RotateAgentRequest is the body of POST /admin/v1/agents/{id}/rotate.
type RotateAgentRequest struct {
	// GraceSeconds keeps the old tokens working this long; 0 ends them now.
	GraceSeconds int64 `json:"graceSeconds"`
}

// LinkAgentRequest is the body of POST /admin/v1/agents/{id}/link: the
// OAuth identity whose access tokens act as the agent from then on.
type LinkAgentRequest struct {
	Issuer  string `json:"issuer"`
	Subject string `json:"subject"`
	// Replace moves the identity from the revoked agent it is linked to
	// (kfa agent link --replace); an active agent's identity never moves.
	Replace bool `json:"replace,omitempty"`
	// By is who moved it, kept on the revoked agent (identityMoved.by).
	By string `json:"by,omitempty"`
}

// LinkedAgent is the answer of POST /admin/v1/agents/{id}/link: the agent,
// and the revoked agent the identity moved from, if it moved.
type LinkedAgent struct {
	Agent
	Replaced *Agent `json:"replaced,omitempty"`
}

// Record is a record as the admin API shows it.
type Record struct {
	ID          string   `json:"id"`
	Kind        string   `json:"kind"`
	Product     string   `json:"product,omitempty"`
	Environment string   `json:"environment,omitempty"`
	Title       string   `json:"title"`
	Body        string   `json:"body,omitempty"` // only on GET /admin/v1/records/{id}
	Tags        []string `json:"tags,omitempty"`
	URL         string   `json:"url,omitempty"`
	UpdatedAt   string   `json:"updatedAt"`
}

// FromRecord converts a record, with its body or without.
func FromRecord(r knowledge.Record, withBody bool) Record {
	out := Record{ID: r.ID, Kind: r.Kind, Product: r.Product, Environment: r.Environment, Title: r.Title,
		Tags: r.Tags, URL: r.URL, UpdatedAt: knowledge.FormatTime(r.UpdatedAt)}
	if withBody {
		out.Body = r.Body
	}
	return out
}

// RecordList is the answer of GET /admin/v1/records: records in id order,
// without bodies.
type RecordList struct {
	Records []Record `json:"records"`
	// NextAfter is the after parameter of the next page; "" on the last.
	NextAfter string `json:"nextAfter,omitempty"`
	Total     int    `json:"total"`
}

// DeleteRecordResponse is the answer of POST /admin/v1/records/{id}:delete.
type DeleteRecordResponse struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// DeleteRecordsRequest is the body of POST /admin/v1/records:delete.
type DeleteRecordsRequest struct {
	IDs []string `json:"ids"` // at most knowledge.MaxDeleteBatch
}
