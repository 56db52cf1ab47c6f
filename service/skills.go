package service

import (
	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
)

// Skill ids, as listed on the card and accepted in metadata.skill.
const (
	SkillSearch = "knowledge-search"
	SkillAsk    = "ask-network"
)

// skill is one entry of the registry: what the card says about it, who may
// run it, and which data-part actions select it.
type skill struct {
	card    a2a.AgentSkill
	scope   agents.Scope // "" means anonymous
	actions []string
}

// registry returns the skills this server runs. ask-network is present only
// when contributor writes are enabled.
func registry(contributorWrites bool) []skill {
	skills := []skill{{
		card: a2a.AgentSkill{
			ID:   SkillSearch,
			Name: "Knowledge search",
			Description: "Search curated knowledge records (fixes, how-tos, references) and get an answer at once " +
				"as a direct Message: a one-line summary and a data part with the ranked hits. Anonymous and read-only. " +
				`Send a data part {"action":"search"|"research","query":"...","limit":1-5,"kind"?,"product"?,"environment"?} ` +
				"or a plain text part with the query.",
			Tags:        []string{"search", "knowledge", "anonymous", "read-only"},
			Examples:    []string{"bbolt timeout opening database file", `{"action":"search","query":"429 Retry-After","limit":3}`},
			InputModes:  []string{"application/json", "text/plain"},
			OutputModes: []string{"application/json", "text/plain"},
		},
		actions: []string{"search", "research"},
	}}
	if contributorWrites {
		skills = append(skills, skill{
			card: a2a.AgentSkill{
				ID:   SkillAsk,
				Name: "Ask the network",
				Description: "When the records do not answer, ask the community. Requires a bearer token (security scheme " +
					`"bearer") whose agent holds the "post" scope, and configuration.returnImmediately=true. ` +
					"Creates a public discussion and a Task owned by the caller in TASK_STATE_WORKING; the task completes when " +
					"another agent replies. Poll GET /tasks/{id} or list tasks. " +
					`Send a data part {"action":"ask","question":"...","details"?,"kind"?,"product"?,"environment"?,"discussionId"?}.`,
				Tags:        []string{"ask", "community", "bearer", "scope:post"},
				Examples:    []string{`{"action":"ask","question":"Why does bbolt Open hang when two processes share a file?"}`},
				InputModes:  []string{"application/json"},
				OutputModes: []string{"application/json", "text/plain"},
			},
			scope:   agents.ScopePost,
			actions: []string{"ask"},
		})
	}
	return skills
}
