package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Dial opens a session to a kfa MCP server for one call of tool, and
// returns what closes it.
type Dial func(ctx context.Context, tool string) (*mcp.ClientSession, func(), error)

// NewForwarder returns an MCP server with the four tools whose calls are
// each made on a session from dial: kfa mcp serves it over stdio and
// dials, per call, the running server's admin socket or a server of its
// own over the file. The answer comes back as the other server gave it;
// a call that cannot be made is a tool error that says why.
func NewForwarder(version, instructions string, dial Dial) (*mcp.Server, error) {
	defs, err := Tools()
	if err != nil {
		return nil, err
	}
	srv := newServer(version, instructions)
	for _, def := range defs {
		name := def.Name
		srv.AddTool(def, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			cs, done, err := dial(ctx, name)
			if err != nil {
				return errorResult(err), nil
			}
			defer done()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: req.Params.Arguments})
			var we *jsonrpc.Error
			if errors.As(err, &we) {
				return nil, we
			}
			if err != nil {
				return errorResult(fmt.Errorf("calling %s: %w", name, err)), nil
			}
			// Only what a tool answers: the inner session's own metadata
			// stays there.
			return &mcp.CallToolResult{Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError}, nil
		})
	}
	return srv, nil
}

func errorResult(err error) *mcp.CallToolResult {
	var r mcp.CallToolResult
	r.SetError(err)
	return &r
}
