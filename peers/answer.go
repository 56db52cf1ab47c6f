package peers

import (
	"crypto/sha256"
	"errors"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/asknet"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/ratelimit"
)

// ErrNotForwarded refuses an answer from a peer for a discussion this
// server never forwarded to it: a peer answers only what it was asked.
var ErrNotForwarded = errors.New("this discussion was not forwarded to that peer")

// Answer is a reply written on a peer to a question forwarded there,
// come back: by the forward's task, or in the peer's feed.
type Answer struct {
	Peer string
	// Server is the peer's public URL.
	Server string
	// DiscussionID is the local discussion the question was forwarded
	// from.
	DiscussionID string
	// ReplyID, AuthorName, Body and URL are the reply's on the peer.
	ReplyID    string
	AuthorName string
	Body       string
	URL        string
}

// AnswerReplyID is the id of the local reply that holds the peer's reply
// replyID: a ULID whose time is the peer's reply's (a ULID too) and
// whose randomness is derived from the peer and the id, so the same
// answer coming twice (by the task and by the feed, or after a crash)
// is one reply, and replies stay in time order.
func AnswerReplyID(peer, replyID string) (string, error) {
	remote, err := ulid.ParseStrict(replyID)
	if err != nil {
		return "", input.Errorf("replyId", "%q is not a reply id (a ULID)", clip(replyID, 64))
	}
	sum := sha256.Sum256([]byte("kfa-answer\n" + peer + "\n" + replyID))
	var id ulid.ULID
	if err := id.SetTime(remote.Time()); err != nil {
		return "", err
	}
	if err := id.SetEntropy(sum[:10]); err != nil {
		return "", err
	}
	return id.String(), nil
}

// AnswerState is what an answer is decided on: the forward of its
// discussion to its peer (locked), a reply already stored under its id,
// and what a reply to the discussion decides on (asknet.ReplyState: the
// discussion, its WORKING tasks, its members).
type AnswerState struct {
	Forward  *Forward
	Existing *discussions.Reply
	Reply    asknet.ReplyState
}

// AnswerOutcome is what an answer does: the reply's outcome (nil when
// the answer was stored already), and the forwards it changed.
type AnswerOutcome struct {
	Reply    *asknet.ReplyOutcome
	Forwards []Forward
}

// DecideAnswer adds a's reply to its discussion as a reply like any
// other (asknet.DecideReply): by the remote author (name@peer, with its
// origin), completing every task waiting on the discussion. Its id is
// AnswerReplyID, so an answer stored already changes nothing. The
// discussion must have been forwarded to a's peer (ErrNotForwarded);
// once answered, its open forwards (others is every forward of the
// discussion) are closed: it waits on no peer any more. The peer's reply
// rate is not the local agents' (no reply window): its volume bound and
// the discussion's reply bound (lim.MaxReplies) hold it.
func DecideAnswer(st AnswerState, a Answer, others []Forward, lim discussions.Limits, now time.Time) (AnswerOutcome, error) {
	if st.Forward == nil {
		return AnswerOutcome{}, ErrNotForwarded
	}
	if st.Existing != nil {
		return AnswerOutcome{}, nil
	}
	if err := ValidateName(a.Peer); err != nil {
		return AnswerOutcome{}, err
	}
	id, err := AnswerReplyID(a.Peer, a.ReplyID)
	if err != nil {
		return AnswerOutcome{}, err
	}
	name := clip(a.AuthorName, MaxAuthorNameLen-MaxNameLen-1) + "@" + a.Peer
	r := discussions.Reply{ID: id, DiscussionID: a.DiscussionID, AuthorID: RemoteAuthorID(a.Peer), AuthorName: name,
		Body: a.Body, CreatedAt: now,
		Origin: &discussions.Origin{Peer: a.Peer, Server: a.Server, ID: a.ReplyID, URL: a.URL}}
	if err := discussions.ValidateReplyBody(r.Body); err != nil {
		return AnswerOutcome{}, err
	}
	lim.ReplyRate = ratelimit.Rate{}
	// The remote author is no agent here: what lets it post is the
	// forward (its peer was asked, and is not removed), checked above.
	st.Reply.Author = &agents.Agent{ID: r.AuthorID, Name: name, CreatedAt: now}
	out, err := asknet.DecideReply(st.Reply, r, lim)
	if err != nil {
		return AnswerOutcome{}, err
	}
	res := AnswerOutcome{Reply: &out}
	if f := *st.Forward; f.State == ForwardAsked || f.State == ForwardPending {
		f.State, f.DoneAt = ForwardAnswered, now
		res.Forwards = append(res.Forwards, f)
	}
	if out.Post.Discussion.Status == discussions.StatusAnswered {
		var rest []Forward
		for _, f := range others {
			if f.Peer != a.Peer {
				rest = append(rest, f)
			}
		}
		res.Forwards = append(res.Forwards, DecideClose(rest, now)...)
	}
	return res, nil
}

// RemoteAuthorID is the author id of the replies that came back from a
// peer: an id of the shape of an agent's (a ULID, which stores key
// authors by), of time zero and randomness derived from the peer's name,
// which no agent has (an agent's id holds its creation time). So the
// replies qualify, and complete every waiting task, as another agent's
// reply does.
func RemoteAuthorID(peer string) string {
	sum := sha256.Sum256([]byte("kfa-peer\n" + peer))
	var id ulid.ULID
	_ = id.SetEntropy(sum[:10]) // 10 bytes: never an error
	return id.String()
}
