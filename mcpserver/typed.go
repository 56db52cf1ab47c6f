package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// handlerFor is a tool's typed handler: its arguments, already checked
// against the input schema, and its output.
type handlerFor[In, Out any] func(ctx context.Context, in In) (Out, error)

// typed adapts h to the SDK as a raw tool handler. It does what the SDK's
// own typed tools do (check the arguments against the input schema, answer
// the output as structured content and as the same JSON in one text
// content, turn errors into tool errors) but with one small decode of the
// arguments and one encode of the output: the SDK's generic path decodes
// both through maps, which made a search cost twice as much.
func typed[In, Out any](def *mcp.Tool, h handlerFor[In, Out]) (mcp.ToolHandler, error) {
	s, ok := def.InputSchema.(*jsonschema.Schema)
	if !ok {
		return nil, fmt.Errorf("mcpserver: tool %s: the input schema is not a *jsonschema.Schema", def.Name)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: tool %s: resolve the input schema: %w", def.Name, err)
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := bytes.TrimSpace(req.Params.Arguments)
		if len(args) == 0 || bytes.Equal(args, []byte("null")) {
			args = []byte("{}")
		}
		var v any
		if err := json.Unmarshal(args, &v); err != nil {
			return errorResult(toolErrorf(OutcomeInvalid, "arguments: not JSON: %v", err)), nil
		}
		if err := resolved.Validate(v); err != nil {
			return errorResult(toolErrorf(OutcomeInvalid, "arguments: %v", err)), nil
		}
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return errorResult(toolErrorf(OutcomeInvalid, "arguments: %v", err)), nil
		}
		out, err := h(ctx, in)
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return nil, we
		}
		if err != nil {
			return errorResult(err), nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("mcpserver: encode the %s result: %w", def.Name, err)
		}
		return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	}, nil
}
