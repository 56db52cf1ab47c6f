package peers

import (
	"fmt"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/moderation"
)

// ModerateOutcome is what a moderator's action on a followed document
// writes: the document after, the log's entry and the event (none of
// them when nothing changed).
type ModerateOutcome struct {
	Result   moderation.Result
	Document *Document
	Entry    *moderation.Entry
	Events   []changelog.Event
}

// DecideModerate decides a moderator's action c on the followed document
// d (nil: none has the key): hide keeps it out of search here, whatever
// its peer sends, until unhide; a followed document has no flags, so
// dismiss changes nothing. Every change is logged like a discussion's.
func DecideModerate(d *Document, c moderation.Command) (ModerateOutcome, error) {
	if d == nil || d.Peer == "" {
		return ModerateOutcome{}, &moderation.ItemNotFoundError{Kind: moderation.KindDocument, ID: c.Target.ID}
	}
	out := ModerateOutcome{Result: moderation.Result{Action: c.Action, ItemKind: moderation.KindDocument, ItemID: d.Key,
		Hidden: d.Hidden}}
	next := *d
	switch c.Action {
	case moderation.ActionHide:
		if d.Hidden {
			return out, nil
		}
		next.Hidden, next.HiddenAt = true, c.At
	case moderation.ActionUnhide:
		if !d.Hidden {
			return out, nil
		}
		next.Hidden, next.HiddenAt = false, time.Time{}
	case moderation.ActionDismiss:
		return out, nil
	default:
		return ModerateOutcome{}, fmt.Errorf("peers: no moderation action %q", c.Action)
	}
	out.Result.Changed, out.Result.Hidden = true, next.Hidden
	out.Document = &next
	out.Entry = &moderation.Entry{
		ID: moderation.EntryID(c.At, 0, string(c.Action), d.Key), At: c.At, Action: c.Action, Actor: c.Actor,
		ItemKind: moderation.KindDocument, ItemID: d.Key, Reason: c.Reason,
	}
	out.Events = []changelog.Event{{Kind: EventDocument, ID: d.Key, Ref: d.Peer, At: c.At}}
	return out, nil
}
