package client

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/knowledge"
)

// ImportRecords streams JSON Lines from r into the records and returns the
// import summary. With strict, a single bad line means nothing is written.
// The call returns once the imported records are searchable.
func (c *Client) ImportRecords(ctx context.Context, r io.Reader, strict bool) (knowledge.ImportSummary, error) {
	var out knowledge.ImportSummary
	q := url.Values{"strict": {strconv.FormatBool(strict)}}
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/records:import", query: q, raw: r}, &out)
	return out, err
}

// DeleteRecord deletes a record; the search index drops it before the
// call returns.
func (c *Client) DeleteRecord(ctx context.Context, id string) (api.DeleteRecordResponse, error) {
	var out api.DeleteRecordResponse
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/records/" + url.PathEscape(id) + ":delete"}, &out)
	return out, err
}

// ReindexRecords rebuilds the search index of a running server, or, when
// no server runs, deletes the index directory for the next start to
// rebuild.
func (c *Client) ReindexRecords(ctx context.Context) (knowledge.IndexStatus, error) {
	var out knowledge.IndexStatus
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/records:reindex"}, &out)
	return out, err
}

// Records lists records in id order after the id after (without bodies);
// pageSize 0 means the server's default.
func (c *Client) Records(ctx context.Context, after string, pageSize int) (api.RecordList, error) {
	var out api.RecordList
	q := url.Values{}
	if after != "" {
		q.Set("after", after)
	}
	if pageSize > 0 {
		q.Set("pageSize", strconv.Itoa(pageSize))
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/records", query: q}, &out)
	return out, err
}

// Record returns one record with its body.
func (c *Client) Record(ctx context.Context, id string) (api.Record, error) {
	var out api.Record
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/records/" + url.PathEscape(id)}, &out)
	return out, err
}

// ExportRecords writes the records (those of o's kind, product and
// environment; all when o is zero) to w as JSON Lines in the import
// format, in id order.
func (c *Client) ExportRecords(ctx context.Context, o knowledge.ExportOptions, w io.Writer) error {
	q := url.Values{}
	for k, v := range map[string]string{"kind": o.Kind, "product": o.Product, "environment": o.Environment} {
		if v != "" {
			q.Set(k, v)
		}
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/records:export", query: q}, w)
	return err
}

// DeleteRecords deletes up to knowledge.MaxDeleteBatch records in one
// transaction and names the ids no record has; the search index drops
// them before the call returns.
func (c *Client) DeleteRecords(ctx context.Context, ids []string) (knowledge.DeleteResult, error) {
	var out knowledge.DeleteResult
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/records:delete", body: api.DeleteRecordsRequest{IDs: ids}}, &out)
	return out, err
}
