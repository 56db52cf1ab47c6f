package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/kfa-project/kfa/api"
)

// AddPeer adds a peer (admin).
func (c *Client) AddPeer(ctx context.Context, req api.PeerAddRequest) (api.Peer, error) {
	var out api.Peer
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/peers", body: req}, &out)
	return out, err
}

// Peers lists the peers (admin).
func (c *Client) Peers(ctx context.Context) (api.PeerList, error) {
	var out api.PeerList
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/peers"}, &out)
	return out, err
}

// PausePeer pauses a peer (admin).
func (c *Client) PausePeer(ctx context.Context, name string) (api.Peer, error) {
	var out api.Peer
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/peers/" + url.PathEscape(name) + "/pause"}, &out)
	return out, err
}

// ResumePeer resumes a peer (admin).
func (c *Client) ResumePeer(ctx context.Context, name string) (api.Peer, error) {
	var out api.Peer
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/peers/" + url.PathEscape(name) + "/resume"}, &out)
	return out, err
}

// RemovePeer removes a peer (admin); purge removes what was followed from
// it too.
func (c *Client) RemovePeer(ctx context.Context, name string, purge bool) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/peers/" + url.PathEscape(name) + "/remove",
		body: api.PeerRemoveRequest{Purge: purge}}, nil)
	return err
}
