package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/kfa-project/kfa/api"
)

// Changes reads one page of the public change feed after cursor ("" for
// the beginning); pageSize 0 is the server's default.
func (c *Client) Changes(ctx context.Context, cursor string, pageSize int) (api.ChangesPage, error) {
	var out api.ChangesPage
	q := url.Values{}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if pageSize > 0 {
		q.Set("pageSize", strconv.Itoa(pageSize))
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/api/v1/changes", query: q}, &out)
	return out, err
}
