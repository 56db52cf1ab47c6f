package service

import (
	"context"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/peers"
)

// Changes is a page of the public change feed the servers that follow
// this one read (GET /api/v1/changes): after the cursor (opaque text, ""
// for the beginning), pageSize entries (nil: the default).
func (s *Service) Changes(ctx context.Context, cursor string, pageSize *int) (peers.FeedPage, error) {
	if s.deps.Feed == nil {
		return peers.FeedPage{}, errNoFeed
	}
	c, err := peers.ParseCursor(cursor)
	if err != nil {
		return peers.FeedPage{}, input.Errorf("cursor", "is not a change feed cursor: pass a nextCursor of an earlier page, or none to start at the beginning")
	}
	n, err := input.PageSize(pageSize, peers.DefaultFeedPage, peers.MaxFeedPage)
	if err != nil {
		return peers.FeedPage{}, err
	}
	return s.deps.Feed.Changes(ctx, c, n)
}

// errNoFeed answers a service built without the feed.
var errNoFeed = a2a.Errorf(a2a.Unavailable, "the change feed is not available on this server")
