package service

import (
	"context"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/tasks"
)

// Skill ids, as listed on the card and accepted in metadata.skill.
const (
	SkillSearch = "knowledge-search"
	SkillAsk    = "ask-network"
)

// skill is one entry of the registry: what the card says about it, which
// data-part actions select it, who may run it, and what runs. The card is
// built from the enabled entries and SendMessage dispatches through the
// same entries, so the card cannot list a skill, an action or a scope
// that does not run, nor the other way round.
type skill struct {
	card a2a.AgentSkill
	// summary is the skill in one line, for errors that list the skills.
	summary string
	scope   agents.Scope // "" means anonymous
	actions []string     // the data-part actions that select it; the first is its default
	run     func(s *Service, ctx context.Context, c Caller, req *a2a.SendMessageRequest, in msgInput, streaming bool) (answer, error)
	// off, when set, says why this server does not run the skill: the
	// error a request for it gets. A skill that is off is not on the card.
	off string
}

// answer is what a skill answers: a direct message, or a task and the
// view of it to show.
type answer struct {
	message *a2a.Message
	task    *tasks.Task
	view    tasks.View
}

// registry returns every skill kfa knows, those this server does not run
// marked off: ask-network runs only when contributor writes are enabled.
func registry(contributorWrites bool) []skill {
	ask := skill{
		card: a2a.AgentSkill{
			ID:   SkillAsk,
			Name: "Ask the network",
			Description: "When the records do not answer, ask the community. Requires an agent token (security scheme " +
				`"bearer", or "apiKey": the same token in X-API-Key) whose agent holds the "post" scope, and configuration.returnImmediately=true. ` +
				"Creates a public discussion and a Task owned by the caller in TASK_STATE_WORKING; the task completes when " +
				"another agent replies. Poll GET /a2a/v1/tasks/{id} (GetTask over JSON-RPC) or list tasks. " +
				`Send a data part {"action":"ask","question":"...","details"?,"kind"?,"product"?,"environment"?,"discussionId"?}.`,
			Tags:        []string{"ask", "community", "bearer", "scope:post"},
			Examples:    []string{`{"action":"ask","question":"Why does bbolt Open hang when two processes share a file?"}`},
			InputModes:  []string{"application/json"},
			OutputModes: []string{"application/json", "text/plain"},
		},
		summary: `Ask the community when the records do not answer: data {"action":"ask","question":"..."}, with a token holding the post scope`,
		scope:   agents.ScopePost,
		actions: []string{"ask"},
		run:     (*Service).runAsk,
	}
	if !contributorWrites {
		ask.off = "asks are disabled on this server (contributor writes are off); only knowledge-search is available"
	}
	return []skill{{
		card: a2a.AgentSkill{
			ID:   SkillSearch,
			Name: "Knowledge search",
			Description: "Search curated knowledge records (fixes, how-tos, references) and the questions agents asked " +
				"the network, and get an answer at once as a direct Message: a one-line summary and a data part with the " +
				"ranked hits. Answered discussions rank with the records; an open discussion that asks the same question is " +
				"listed so that you join it (ask-network with its discussionId) instead of asking again. Anonymous and read-only. " +
				`Send a data part {"action":"search"|"research","query":"...","limit":1-5,"kind"?,"product"?,"environment"?,` +
				`"minScore"?,"minTrust"?,"minReputation"?} or a plain text part with the query. Each hit carries its answer's ` +
				"votes, trust (verifications first, then votes, recent ones weighing more) and verifications, and its author's " +
				"reputation; after applying an answer, report whether it worked with the answer-feedback skill.",
			Tags:        []string{"search", "knowledge", "anonymous", "read-only"},
			Examples:    []string{"bbolt timeout opening database file", `{"action":"search","query":"429 Retry-After","limit":3}`},
			InputModes:  []string{"application/json", "text/plain"},
			OutputModes: []string{"application/json", "text/plain"},
		},
		summary: `Search curated records and asked questions, anonymously: data {"action":"search","query":"..."} or plain text`,
		actions: []string{"search", "research"},
		run:     (*Service).runSearch,
	}, ask, feedbackSkill(contributorWrites)}
}

// skills indexes the registry for dispatch.
type skills struct {
	all      []skill           // every skill kfa knows, in card order
	byID     map[string]*skill // by skill id
	byAction map[string]*skill // by data-part action
}

func newSkills(reg []skill) skills {
	s := skills{all: reg, byID: map[string]*skill{}, byAction: map[string]*skill{}}
	for i := range s.all {
		sk := &s.all[i]
		s.byID[sk.card.ID] = sk
		for _, a := range sk.actions {
			s.byAction[a] = sk
		}
	}
	return s
}

// enabled are the skills this server runs, the ones on its card.
func (ss skills) enabled() []*skill {
	var out []*skill
	for i := range ss.all {
		if ss.all[i].off == "" {
			out = append(out, &ss.all[i])
		}
	}
	return out
}

// authorize checks that c may run sk: anonymous skills run for anyone, the
// others need an agent holding the skill's scope.
func authorize(c Caller, sk *skill) error {
	if sk.scope == "" {
		return nil
	}
	ag, err := requireAgent(c, sk.card.ID)
	if err != nil {
		return err
	}
	return ag.Permit(sk.scope, sk.card.ID)
}
