package mcpserver

import (
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
// content, turn errors into tool errors) with two differences: the
// argument errors are kfa's, worded for the model (args), and the output
// is encoded once: the SDK's generic path decodes and encodes through
// maps, which made a search cost twice as much.
func typed[In, Out any](def *mcp.Tool, h handlerFor[In, Out]) (mcp.ToolHandler, error) {
	s, ok := def.InputSchema.(*jsonschema.Schema)
	if !ok {
		return nil, fmt.Errorf("mcpserver: tool %s: the input schema is not a *jsonschema.Schema", def.Name)
	}
	spec, err := newArgs(def.Name, s)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := spec.check(req.Params.Arguments)
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return nil, we
		}
		if err != nil {
			return errorResult(err), nil
		}
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			// check wrote args for In: a mismatch is kfa's bug.
			return nil, internalError("decode the checked %s arguments: %v", def.Name, err)
		}
		out, err := h(ctx, in)
		if errors.As(err, &we) {
			return nil, we
		}
		if err != nil {
			return errorResult(err), nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, internalError("encode the %s result: %v", def.Name, err)
		}
		return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	}, nil
}

// internalError is a JSON-RPC internal error: a plain error would reach
// the client with code 0.
func internalError(format string, a ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcpserver: " + fmt.Sprintf(format, a...)}
}
