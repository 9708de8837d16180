#!/usr/bin/env bash
# Throughput of wasmcp scaled out (docs/performance.md, "Scale-out"):
# stateless 2026-07-28 tools/call of the C echo plugin from 64 keep-alive
# clients (bench/cmd/load http) against
#
#   cluster/3-nginx             3 replicas with [cluster] behind nginx
#   cluster/1-nginx             1 of them behind its own nginx
#   cluster/1-direct            1 of them, no proxy
#   cluster/1-direct-nocluster  a replica of the same config without [cluster]
#
# nginx is scripts/cluster/nginx.conf (the cluster harness's: one process,
# round robin, HTTP/1.1 keepalive upstream); Redis and everything else run
# on loopback ports of their own and are stopped at the end. Not run by CI.
#
#   bench/cluster.sh [--runs N] [--duration D] [--out DIR]
#
# Rounds rotate the order of the configurations. Needs redis-server and
# nginx (scripts/install-deps.sh). About 1.5 minutes with the defaults.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
runs=3 dur=4s out=""
# shellcheck source=lib.sh
. "$here/lib.sh"
bench_args 18 "$@"
bench_no_rest
bench_out wasmcp-cluster-bench
bin="$out/bin" work="$out/work"
mkdir -p "$bin" "$work"
results="$out/results.jsonl"
: >"$results"
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# freeport: a loopback port nothing listens on (tried at random).
freeport() {
	local p
	while :; do
		p=$(shuf -i 20000-60999 -n 1)
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}

{
	echo "wasmcp commit: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "go: $(go env GOVERSION)  nproc: $(nproc)  cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "nginx: $("$nginx_bin" -v 2>&1 | sed 's/.*: //')  redis: $(redis-server --version | cut -d' ' -f3)"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/env.txt"

echo "== build" >&2
(cd "$root" && go build -o "$bin/wasmcp" ./cmd/wasmcp)
(cd "$here" && go build -o "$bin/" ./cmd/load)

redis_port="$(freeport)"
mkdir -p "$work/redis"
redis-server --bind 127.0.0.1 --port "$redis_port" --dir "$work/redis" --save "" --appendonly no \
	--daemonize no </dev/null >"$work/redis.log" 2>&1 &
pids+=($!)

header() {
	printf '[server]\nname = "bench"\ncache_dir = "%s"\nkv_dir = ":memory:"\nlog_level = "warn"\n' "$work/cache"
	printf '[[plugins]]\nname = "cecho"\npath = "%s"\n' "$here/plugins/cecho/cecho.wasm"
}
header >"$work/nocluster.toml"
{ header; printf '[cluster]\nredis = "redis://127.0.0.1:%s/0"\nkey = "${WASMCP_CLUSTER_KEY}"\n' "$redis_port"; } >"$work/cluster.toml"
export WASMCP_CLUSTER_KEY="bench-cluster-key-0123456789abcdef0123"

# replica NAME CONFIG: starts wasmcp and sets $url to its base URL once
# it serves.
replica() {
	local log="$work/$1.log"
	"$bin/wasmcp" serve --config "$2" --http 127.0.0.1:0 </dev/null >/dev/null 2>"$log" &
	pids+=($!)
	for _ in $(seq 600); do
		url="$(sed -n 's/.*serving MCP on \(http:[^ ]*\)\/mcp.*/\1/p' "$log" | head -n 1)"
		[ -n "$url" ] && return
		sleep 0.1
	done
	echo "cluster.sh: $1 printed no URL:" >&2
	cat "$log" >&2
	exit 1
}
# proxy NAME URL...: starts nginx in front of the URLs and sets $url to
# its URL.
proxy() {
	local name="$1" dir="$work/$1" port ups=""
	shift
	mkdir -p "$dir"
	port="$(freeport)"
	for u in "$@"; do ups+="		server ${u#http://} max_fails=1 fail_timeout=2s;"$'\n'; done
	sed -e "s|@DIR@|$dir|g" -e "s|@LISTEN@|127.0.0.1:$port|" "$root/scripts/cluster/nginx.conf" |
		awk -v ups="$ups" '{ if ($0 == "@UPSTREAMS@") printf "%s", ups; else print }' >"$dir/nginx.conf"
	"$nginx_bin" -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" </dev/null >"$dir/nginx.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && { url="http://127.0.0.1:$port"; return; }
		sleep 0.1
	done
	echo "cluster.sh: nginx $name did not start" >&2
	cat "$dir/error.log" >&2
	exit 1
}

# The first replica compiles the plugin into the cache the others use.
replica replica1 "$work/cluster.toml"; r1="$url"
replica replica2 "$work/cluster.toml"; r2="$url"
replica replica3 "$work/cluster.toml"; r3="$url"
replica nocluster "$work/nocluster.toml"; rn="$url"
proxy nginx3 "$r1" "$r2" "$r3"; lb3="$url"
proxy nginx1 "$r1"; lb1="$url"
echo "replicas $r1 $r2 $r3, nginx $lb3 (3) $lb1 (1), without [cluster] $rn" >&2

cfgs=(
	"cluster/3-nginx|$lb3/mcp"
	"cluster/1-nginx|$lb1/mcp"
	"cluster/1-direct|$r1/mcp"
	"cluster/1-direct-nocluster|$rn/mcp"
)
failed=()
echo "== HTTP: 64 keep-alive clients, stateless 2026-07-28, $runs rounds of 1 s warm-up + $dur" >&2
# http_run R NAME|URL runs round R of one configuration.
http_run() {
	local name url
	IFS='|' read -r name url <<<"$2"
	"$bin/load" http -name "$name" -url "$url" -c 64 -warmup 1s -d "$dur" -round "$1" -json "$results"
}
bench_rounds http_run "${cfgs[@]}"

echo
cat "$out/env.txt"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$bin/load" summary "$results"
echo "results: $out" >&2
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAILED runs: ${failed[*]}" >&2
	exit 1
fi
