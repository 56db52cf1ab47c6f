package web

import (
	"context"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
)

// agentNames tells apart agents that share a name (made with
// --allow-duplicate-name, or before kfa refused duplicates): a shared
// name is shown with the end of the agent's id, "alice (…R7P9N)".
type agentNames struct {
	shared map[string]bool // by agents.NameKey
}

// nameSuffix is how much of an id a shared name is shown with.
const nameSuffix = 6

// Of is how agent id, named name, is shown.
func (n agentNames) Of(name, id string) string {
	if !n.shared[agents.NameKey(name)] || len(id) <= nameSuffix {
		return name
	}
	return name + " (…" + id[len(id)-nameSuffix:] + ")"
}

// names looks up which of the names a page shows another agent has too.
// Without an agents service, or when the lookup fails, names are shown
// as they are: a page is not refused for it.
func (h *Handler) names(ctx context.Context, names ...string) agentNames {
	if len(names) == 0 {
		return agentNames{}
	}
	shared, err := h.deps.Service.SharedNames(ctx, names)
	if err != nil {
		h.deps.Log.Warn("web: look up shared agent names", "err", err)
		return agentNames{}
	}
	out := agentNames{shared: map[string]bool{}}
	for n, s := range shared {
		if s {
			out.shared[agents.NameKey(n)] = true
		}
	}
	return out
}

// authors are the names of the discussions' authors.
func authors(lists ...[]discussions.Discussion) []string {
	var out []string
	for _, l := range lists {
		for _, d := range l {
			out = append(out, d.AuthorName)
		}
	}
	return out
}

// discList is what the disclist template shows: discussions, and how to
// name their authors.
type discList struct {
	Items []discussions.Discussion
	Names agentNames
}

// newDiscList is the disclist template's argument.
func newDiscList(items []discussions.Discussion, names agentNames) discList {
	return discList{Items: items, Names: names}
}
