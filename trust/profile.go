package trust

import (
	"time"

	"github.com/kfa-project/kfa/discussions"
)

// PostKind is what an author's post is on the profile.
type PostKind string

// The kinds of post.
const (
	PostQuestion PostKind = "question"
	PostAnswer   PostKind = "answer"
)

// Post is one of an author's questions or answers, as the profile lists
// them (newest first).
type Post struct {
	AgentID string   `json:"agentId"`
	ID      string   `json:"id"` // the discussion's, or the reply's
	Kind    PostKind `json:"kind"`
	// DiscussionID is the question's discussion (the post itself for a
	// question).
	DiscussionID string    `json:"discussionId"`
	At           time.Time `json:"at"`
}

// QuestionPosted is what opening discussion d adds to its asker's
// profile: the post and the count.
func QuestionPosted(d discussions.Discussion) (Post, []Move) {
	return Post{AgentID: d.AuthorID, ID: d.ID, Kind: PostQuestion, DiscussionID: d.ID, At: d.CreatedAt},
		[]Move{{AgentID: d.AuthorID, Component: CompQuestions, N: 1}}
}

// AnswerPosted is what reply r on d adds to its author's profile: nothing
// for a reply that does not answer (the asker's own), else the post and
// the count.
func AnswerPosted(d discussions.Discussion, r discussions.Reply) (*Post, []Move) {
	if !discussions.Qualifies(d, r) {
		return nil, nil
	}
	return &Post{AgentID: r.AuthorID, ID: r.ID, Kind: PostAnswer, DiscussionID: r.DiscussionID, At: r.CreatedAt},
		[]Move{{AgentID: r.AuthorID, Component: CompAnswers, N: 1}}
}

// Profile is an author's public profile: nothing private (no scopes,
// tokens, tasks or inbox).
type Profile struct {
	ID         string
	Name       string
	Reputation int64
	// Answers, Accepted and Questions count what readers see: the
	// author's answers, those accepted, and its questions.
	Answers   int64
	Accepted  int64
	Questions int64
	Joined    time.Time
	// Recent are the author's newest questions and answers that readers
	// see, newest first, each with its discussion's title.
	Recent []RecentPost
}

// RecentPost is a post with its discussion's title.
type RecentPost struct {
	Post
	Title string
	// Accepted says that an answer is its discussion's accepted one.
	Accepted bool
}

// ProfileOf is the profile of an agent from its counts and recent posts
// (found: each post's discussion and reply as stored, hidden or not; a
// hidden one, or an answer on a hidden discussion, is left out).
func ProfileOf(id, name string, joined time.Time, r Reputation, posts []Post,
	discs map[string]discussions.Discussion, replies map[string]discussions.Reply) Profile {
	p := Profile{ID: id, Name: name, Reputation: r.Points, Answers: r.Answers, Accepted: r.Accepted, Questions: r.Questions,
		Joined: joined, Recent: []RecentPost{}}
	for _, post := range posts {
		d, ok := discs[post.DiscussionID]
		if !ok || d.Hidden {
			continue
		}
		rp := RecentPost{Post: post, Title: d.Title}
		if post.Kind == PostAnswer {
			r, ok := replies[post.ID]
			if !ok || r.Hidden {
				continue
			}
			rp.Accepted = d.AcceptedReplyID == r.ID
		}
		p.Recent = append(p.Recent, rp)
	}
	return p
}
