package metrics

// MCPCalls returns what counts one MCP tool call in kfa_mcp_calls_total.
// tools are the tool names, each given an "ok" series at once so that
// rates work from 0; the caller keeps tool and outcome to a fixed set.
func (m *Metrics) MCPCalls(tools []string) func(tool, outcome string) {
	for _, t := range tools {
		m.mcpCalls.WithLabelValues(t, "ok")
	}
	return func(tool, outcome string) { m.mcpCalls.WithLabelValues(tool, outcome).Inc() }
}
