package a2a

import (
	"encoding/json"
	"testing"
)

func TestCardToV03(t *testing.T) {
	c := AgentCard{
		Name: "kfa", Description: "d", Version: "1",
		SupportedInterfaces: []AgentInterface{
			{URL: "https://k/a2a/v1", ProtocolBinding: BindingHTTPJSON, ProtocolVersion: Version10},
			{URL: "https://k/a2a/jsonrpc", ProtocolBinding: BindingJSONRPC, ProtocolVersion: Version10},
			{URL: "https://k/a2a/jsonrpc", ProtocolBinding: BindingJSONRPC, ProtocolVersion: Version03},
		},
		Capabilities: AgentCapabilities{Streaming: true, ExtendedAgentCard: true},
		SecuritySchemes: map[string]SecurityScheme{
			"bearer": {HTTPAuth: &HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "kfa_x"}},
			"apiKey": {APIKey: &APIKeySecurityScheme{Location: "header", Name: "X-API-Key"}},
		},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		SecurityRequirements: []SecurityRequirement{{Schemes: map[string]StringList{"bearer": {}}},
			{Schemes: map[string]StringList{"apiKey": {}}}, {Schemes: map[string]StringList{}}},
		Skills: []AgentSkill{{ID: "s", Name: "S", Description: "sd", Tags: []string{"t"},
			SecurityRequirements: []SecurityRequirement{{Schemes: map[string]StringList{"bearer": {List: []string{"post"}}}}}}},
		Signatures: []AgentCardSignature{{Protected: "p", Signature: "s"}},
	}
	b, err := json.Marshal(c.ToV03())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"protocolVersion":"0.3.0","name":"kfa","description":"d","url":"https://k/a2a/jsonrpc","preferredTransport":"JSONRPC",` +
		`"additionalInterfaces":[{"url":"https://k/a2a/jsonrpc","transport":"JSONRPC"}],"version":"1",` +
		`"capabilities":{"streaming":true,"pushNotifications":false,"stateTransitionHistory":false},` +
		`"securitySchemes":{"apiKey":{"type":"apiKey","in":"header","name":"X-API-Key"},"bearer":{"type":"http","scheme":"Bearer","bearerFormat":"kfa_x"}},` +
		`"security":[{"bearer":[]},{"apiKey":[]},{}],` +
		`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
		`"skills":[{"id":"s","name":"S","description":"sd","tags":["t"],"security":[{"bearer":["post"]}]}],"supportsAuthenticatedExtendedCard":true}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}
