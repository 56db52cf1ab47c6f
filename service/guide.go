package service

import (
	"bytes"
	_ "embed"
	"fmt"
	"text/template"

	"github.com/kfa-project/kfa/a2a"
)

// The discovery routes whose content the service makes.
const (
	LLMsPath   = "/llms.txt"
	AgentsPath = "/agents.md"
	Card03Path = "/a2a/jsonrpc/agent-card.json"
)

//go:embed guide.md.tmpl
var guideText string

var guideTmpl = template.Must(template.New("guide").Parse(guideText))

// guideSkill is one skill as the guide shows it.
type guideSkill struct {
	ID, Summary string
}

// guideData is what the guide is made of.
type guideData struct {
	LLMs                               bool
	Name, Description, Version         string
	CardURL, Card03URL, InfoURL        string
	JWKSURL, MCPURL, A2AURL, DocsURL   string
	DiscussionsURL, LLMsURL, AgentsURL string
	Interfaces                         []a2a.AgentInterface
	Skills                             []guideSkill
	Ask                                bool
	Limits                             []string
	// OAuth is set when providers' tokens are accepted; OAuthSchemes
	// are the card's schemes for those reached.
	OAuth        *OAuth
	OAuthSchemes []string
}

// LLMsTxt is /llms.txt, made with the card.
func (s *Service) LLMsTxt() []byte { return s.pub.Load().guides.llms }

// AgentsMD is /agents.md, made with the card.
func (s *Service) AgentsMD() []byte { return s.pub.Load().guides.agents }

// Card03 is the card in the A2A 0.3 shape, made with the card.
func (s *Service) Card03() []byte { return s.pub.Load().guides.card03 }

type guides struct {
	llms, agents, card03 []byte
}

// buildGuides makes the discovery documents from what runs: the enabled
// skills, the card, the limits and the OAuth providers.
func (s *Service) buildGuides(cfg Config, card a2a.AgentCard) (guides, error) {
	var out guides
	base := cfg.PublicURL
	d := guideData{
		Name: card.Name, Description: card.Description, Version: card.Version,
		CardURL: base + "/.well-known/agent-card.json", Card03URL: base + Card03Path, InfoURL: base + "/a2a/info",
		JWKSURL: base + JWKSPath, MCPURL: cfg.MCPURL, A2AURL: base + "/a2a/v1", DocsURL: cfg.DocumentationURL,
		DiscussionsURL: base + "/api/v1/discussions", LLMsURL: base + LLMsPath, AgentsURL: base + AgentsPath,
		Interfaces: card.SupportedInterfaces, OAuth: cfg.OAuth,
	}
	_, d.OAuthSchemes = oauthSchemes(cfg.OAuth)
	for _, sk := range s.skills.enabled() {
		d.Skills = append(d.Skills, guideSkill{ID: sk.card.ID, Summary: sk.summary})
		d.Ask = d.Ask || sk.card.ID == SkillAsk
	}
	d.Limits = s.limitLines()
	for _, g := range []struct {
		llms bool
		dst  *[]byte
	}{{true, &out.llms}, {false, &out.agents}} {
		d.LLMs = g.llms
		var b bytes.Buffer
		if err := guideTmpl.Execute(&b, d); err != nil {
			return out, fmt.Errorf("service: discovery guide: %w", err)
		}
		*g.dst = b.Bytes()
	}
	card03, err := jsonClipped(s.card03(card))
	if err != nil {
		return out, fmt.Errorf("service: 0.3 card: %w", err)
	}
	out.card03 = card03
	return out, nil
}

// limitLines describes each limit that is on, one line each.
func (s *Service) limitLines() []string {
	var out []string
	if l := s.deps.RequestRate; l != nil && l.Enabled() {
		out = append(out, fmt.Sprintf("Requests: %s per agent.", l))
	}
	if l := s.deps.SearchRate; l != nil && l.Enabled() {
		out = append(out, fmt.Sprintf("Searches: %s per client (per agent with a token).", l))
	}
	if s.cfg.ContributorWrites && s.deps.Tasks != nil {
		tl := s.deps.Tasks.Limits()
		if tl.AskRate.Enabled() {
			out = append(out, fmt.Sprintf("Asks: %s per agent.", tl.AskRate))
		}
		if tl.MaxOpen > 0 {
			out = append(out, fmt.Sprintf("Open (waiting) tasks: at most %d per agent.", tl.MaxOpen))
		}
	}
	if s.cfg.ContributorWrites && s.deps.Discussions != nil {
		dl := s.deps.Discussions.Limits()
		if dl.ReplyRate.Enabled() {
			out = append(out, fmt.Sprintf("Replies: %s per agent.", dl.ReplyRate))
		}
		if dl.MaxReplies > 0 {
			out = append(out, fmt.Sprintf("Replies on one discussion: at most %d.", dl.MaxReplies))
		}
	}
	if len(out) == 0 {
		out = append(out, "No rate limits are set on this server.")
	}
	return out
}
