package service

import (
	"fmt"
	"strings"

	"github.com/kfa-project/kfa/internal/english"
	"github.com/kfa-project/kfa/knowledge"
)

// summary is the one-line text of a search answer. It counts what was
// found honestly ("Found 2 records and 1 answered discussion for ..."),
// lists the titles, and when an open discussion asks the same question,
// tells the agent to join it rather than ask again.
func (s *Service) summary(query string, res knowledge.Result) string {
	records, answered, _ := res.Counts()
	var b strings.Builder
	switch {
	case len(res.Hits) == 0:
		fmt.Fprintf(&b, "No knowledge records or answered discussions match %q.", query)
		if s.cfg.ContributorWrites {
			b.WriteString(" Nothing found; to ask the community, use the ask-network skill.")
		}
		return b.String()
	case records+answered == 0:
		fmt.Fprintf(&b, "No answer yet for %q.", query)
	default:
		var found []string
		if records > 0 {
			found = append(found, plural(records, "record", "records"))
		}
		if answered > 0 {
			found = append(found, plural(answered, "answered discussion", "answered discussions"))
		}
		var titles []string
		for _, h := range res.Hits {
			if h.Source == knowledge.SourceRecord || h.Status == knowledge.StatusAnswered {
				titles = append(titles, oneLine(h.Title))
			}
		}
		fmt.Fprintf(&b, "Found %s for %q: %s.", strings.Join(found, " and "), query, strings.Join(titles, "; "))
	}
	for _, c := range res.Corrections {
		fmt.Fprintf(&b, " (Nothing matched %q as typed; searched %q.)", c.From, c.To)
	}
	for _, h := range res.Hits {
		if h.Source != knowledge.SourceDiscussion || h.Status != knowledge.StatusOpen {
			continue
		}
		if s.cfg.ContributorWrites {
			fmt.Fprintf(&b, " An open discussion asks this: join it with discussionId %s "+
				`(ask-network with {"action":"ask","discussionId":%q,...}) rather than asking again: %q.`, h.ID, h.ID, oneLine(h.Title))
		} else {
			fmt.Fprintf(&b, " An open discussion asks this too, with no answer yet: %s (%q).", h.PageURL, oneLine(h.Title))
		}
	}
	return b.String()
}

func plural(n int, one, many string) string { return english.Count(n, one, many) }

// oneLine keeps a title on the summary's one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
