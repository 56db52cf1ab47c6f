#!/usr/bin/env bash
# The outside checks of kfa's MCP surface, for TestMCPOutsideChecks
# (cmd/kfa): the official MCP conformance suite and the MCP Inspector,
# Node programs that need Node 22, installed from npm at pinned versions.
#
#   .ci/mcp-tools.sh DIR   install them into DIR (created if missing);
#                          then KFA_MCP_TOOLS=DIR go test ./cmd/kfa/ runs
#                          the test, which skips without KFA_MCP_TOOLS
#
# Needs npm (any Node version: Node 22 itself comes from npm, as the node
# package). Nothing is installed globally; DIR holds everything (~330 MB).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"private": true}' > package.json
npm install --no-fund --no-audit --loglevel=error \
  node@22.23.3 \
  @modelcontextprotocol/conformance@0.1.16 \
  @modelcontextprotocol/inspector@2.12.0 >&2
node_modules/.bin/node --version >&2
