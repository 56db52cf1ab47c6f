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
// hidden reply, an accepted answer loses the mark (r remembers it had
// it, for ShowReply), and d is answered by other, its earliest visible
// qualifying reply besides r (nil when it has none: then it is open
// again, see Answered).
func HideReply(d Discussion, r Reply, at time.Time, other *Reply) (Discussion, Reply) {
	if r.Hidden {
		return d, r
	}
	r.Hidden, r.HiddenAt = true, at
	d.HiddenReplies++
	d = Answered(d, other)
	if d.AcceptedReplyID == r.ID {
		d.AcceptedReplyID = ""
		r.Unaccepted = true
	}
	return d, r
}

// ShowReply returns d and r after r is public again: it gets the
// accepted mark back if it lost it to hiding and the asker has accepted
// no other reply since, and d is answered by the earlier of r (when it
// qualifies) and other, its earliest visible qualifying reply besides r
// (nil for none; see Answered).
func ShowReply(d Discussion, r Reply, other *Reply) (Discussion, Reply) {
	if !r.Hidden {
		return d, r
	}
	r.Hidden, r.HiddenAt = false, time.Time{}
	d.HiddenReplies--
	first := other
	if Qualifies(d, r) && (first == nil || r.CreatedAt.Before(first.CreatedAt)) {
		first = &r
	}
	d = Answered(d, first)
	if r.Unaccepted && d.AcceptedReplyID == "" {
		d.AcceptedReplyID = r.ID
	}
	r.Unaccepted = false
	return d, r
}
