#!/usr/bin/env bash
# Runs the official MCP conformance suite (server leg) against wasmcp's
# protocol engine serving the conformance fixture (mcptest.Everything):
# both wires (2025-11-25 stateful, 2026-07-28 stateless) on one endpoint,
# then the frozen requirement scorecards. Needs node and npm.
#
#   interop/conformance.sh            run everything
#   REFEREE=0.2.0-alpha.12 interop/conformance.sh
set -euo pipefail
cd "$(dirname "$0")"
referee="${REFEREE:-0.2.0-alpha.12}"
work="${CONFORMANCE_DIR:-${TMPDIR:-/tmp}/wasmcp-conformance}"
port="${PORT:-3917}"

mkdir -p "$work"
if [ ! -x "$work/node_modules/.bin/conformance" ]; then
	(cd "$work" && npm init -y >/dev/null && npm install --no-audit --no-fund "@modelcontextprotocol/conformance@$referee" glob@10 >/dev/null)
fi
# The referee imports fs.globSync, which Node 20 lacks: take it from the
# glob package instead (harmless on Node 22+).
dist="$work/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if ! node -e 'process.exit(typeof require("fs").globSync === "function" ? 0 : 1)'; then
	sed -i 's/import{existsSync as i,globSync as a,mkdtempSync/import{globSync as a}from"glob";import{existsSync as i,mkdtempSync/' "$dist"
fi

go build -o "$work/everything-server" ./cmd/everything-server
"$work/everything-server" -addr "127.0.0.1:$port" 2>"$work/server.log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
	curl -s -o /dev/null "http://127.0.0.1:$port/mcp" && break
	sleep 0.1
done

url="http://localhost:$port/mcp"
referee() { "$work/node_modules/.bin/conformance" server --url "$url" "$@"; }
status=0
referee --suite all --spec-version 2025-11-25 || status=1
referee --suite all --spec-version 2026-07-28 || status=1
referee --requirements 2025-11-25 >/dev/null || status=1
referee --requirements 2026-07-28 >/dev/null || status=1
exit $status
