package discussions

import "time"

// What hiding does to content, whoever decides it (moderation decides
// when). Each function returns the values after; it never fails and
// changes nothing that is already so.

// HideDiscussion returns d hidden at at.
func HideDiscussion(d Discussion, at time.Time) Discussion {
	if !d.Hidden {
		d.Hidden, d.HiddenAt = true, at
	}
	return d
}

// ShowDiscussion returns d public again.
func ShowDiscussion(d Discussion) Discussion {
	d.Hidden, d.HiddenAt = false, time.Time{}
	return d
}

// HideReply returns d and r after r is hidden at at: d counts one more
// hidden reply, and an accepted answer loses the mark (r remembers it
// had it, for ShowReply).
func HideReply(d Discussion, r Reply, at time.Time) (Discussion, Reply) {
	if r.Hidden {
		return d, r
	}
	r.Hidden, r.HiddenAt = true, at
	d.HiddenReplies++
	if d.AcceptedReplyID == r.ID {
		d.AcceptedReplyID = ""
		r.Unaccepted = true
	}
	return d, r
}

// ShowReply returns d and r after r is public again: it gets the
// accepted mark back if it lost it to hiding and the asker has accepted
// no other reply since.
func ShowReply(d Discussion, r Reply) (Discussion, Reply) {
	if !r.Hidden {
		return d, r
	}
	r.Hidden, r.HiddenAt = false, time.Time{}
	d.HiddenReplies--
	if r.Unaccepted && d.AcceptedReplyID == "" {
		d.AcceptedReplyID = r.ID
	}
	r.Unaccepted = false
	return d, r
}
