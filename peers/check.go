package peers

import (
	"fmt"
	"net/url"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/knowledge"
)

// MaxAuthorNameLen bounds an author's name in a peer's thread (an
// agent's name is shorter still).
const MaxAuthorNameLen = 200

// CheckChange says whether c, an entry of a peer's feed, may be followed
// under b: what a feed entry may hold is what this server would accept
// from its own agents (a record's rules, a question's and a reply's
// lengths, valid UTF-8), links that are http or https, and at most
// b.MaxDocBytes of text. It returns the entry's size in bytes.
func CheckChange(c Change, b Bounds) (int, error) {
	switch c.Source {
	case SourceRecord, SourceDiscussion:
	default:
		return 0, fmt.Errorf("source %q is neither record nor discussion", clip(c.Source.str(), 32))
	}
	if err := knowledge.ValidateID(c.ID); err != nil {
		return 0, fmt.Errorf("id: %w", err)
	}
	if err := checkLink("url", c.URL); err != nil {
		return 0, err
	}
	if c.At.IsZero() {
		return 0, fmt.Errorf("at: missing")
	}
	if o := c.Origin; o != nil {
		if _, err := NormalizeURL("origin.server", o.Server); err != nil {
			return 0, err
		}
		if err := knowledge.ValidateID(o.ID); err != nil {
			return 0, fmt.Errorf("origin.id: %w", err)
		}
	}
	switch c.Op {
	case OpDelete:
		if c.Record != nil || c.Thread != nil {
			return 0, fmt.Errorf("a delete holds a document")
		}
		return len(c.ID), nil
	case OpUpsert:
	default:
		return 0, fmt.Errorf("op %q is neither upsert nor delete", clip(string(c.Op), 32))
	}
	size := 0
	switch {
	case c.Source == SourceRecord && c.Record != nil && c.Thread == nil:
		r := c.Record
		if r.ID != c.ID {
			return 0, fmt.Errorf("record.id %q is not the entry's id", clip(r.ID, 64))
		}
		if err := r.Validate(); err != nil {
			return 0, fmt.Errorf("record: %w", err)
		}
		size = r.Size()
	case c.Source == SourceDiscussion && c.Thread != nil && c.Record == nil:
		n, err := checkThread(c.ID, c.Thread)
		if err != nil {
			return 0, fmt.Errorf("discussion: %w", err)
		}
		size = n
	default:
		return 0, fmt.Errorf("an upsert of a %s holds no %s, or something else", c.Source, c.Source)
	}
	if size > b.MaxDocBytes {
		return 0, fmt.Errorf("%d bytes, over the bound of %d bytes a document", size, b.MaxDocBytes)
	}
	return size, nil
}

func (s Source) str() string { return string(s) }

// checkThread checks a peer's thread of id and returns its size.
func checkThread(id string, t *Thread) (int, error) {
	if t.ID != id {
		return 0, fmt.Errorf("id %q is not the entry's id", clip(t.ID, 64))
	}
	if err := discussions.ValidateQuestion(t.Title, t.Body, t.Filters); err != nil {
		return 0, err
	}
	if err := input.Text("authorName", t.AuthorName, 1, MaxAuthorNameLen, false); err != nil {
		return 0, err
	}
	if t.Status != discussions.StatusAnswered {
		return 0, fmt.Errorf("status %q: a feed holds answered discussions only", clip(string(t.Status), 32))
	}
	if t.CreatedAt.IsZero() {
		return 0, fmt.Errorf("createdAt: missing")
	}
	if len(t.Replies) > MaxThreadReplies {
		return 0, fmt.Errorf("%d replies, at most %d", len(t.Replies), MaxThreadReplies)
	}
	size := len(t.Title) + len(t.Body) + len(t.AuthorName)
	acceptedFound := t.AcceptedReplyID == ""
	for i, r := range t.Replies {
		field := fmt.Sprintf("replies[%d]", i)
		if err := knowledge.ValidateID(r.ID); err != nil {
			return 0, fmt.Errorf("%s.id: %w", field, err)
		}
		if err := input.Text(field+".authorName", r.AuthorName, 1, MaxAuthorNameLen, false); err != nil {
			return 0, err
		}
		if err := input.Text(field+".body", r.Body, 1, discussions.MaxReplyLen, true); err != nil {
			return 0, err
		}
		if r.CreatedAt.IsZero() {
			return 0, fmt.Errorf("%s.createdAt: missing", field)
		}
		if o := r.Origin; o != nil {
			if _, err := NormalizeURL(field+".origin.server", o.Server); err != nil {
				return 0, err
			}
			if o.URL != "" {
				if err := checkLink(field+".origin.url", o.URL); err != nil {
					return 0, err
				}
			}
		}
		acceptedFound = acceptedFound || r.ID == t.AcceptedReplyID
		size += len(r.Body) + len(r.AuthorName)
	}
	if !acceptedFound {
		return 0, fmt.Errorf("acceptedReplyId %q names none of its replies", clip(t.AcceptedReplyID, 64))
	}
	return size, nil
}

// checkLink checks a link this server will show: http or https, at most
// MaxURLLen bytes (never javascript: or data:).
func checkLink(field, s string) error {
	if s == "" {
		return input.Errorf(field, "is required")
	}
	if len(s) > MaxURLLen {
		return input.Errorf(field, "%d bytes, at most %d", len(s), MaxURLLen)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return input.Errorf(field, "must be an http or https URL")
	}
	return nil
}
