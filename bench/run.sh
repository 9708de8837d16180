#!/usr/bin/env bash
# Runs wasmcp's benchmarks and prints the tables of docs/performance.md.
#
#   bench/run.sh [--snapshot] [--runs N] [--duration D] [--out DIR] [--no-gotest] [--profile]
#
#   --snapshot     benchmark the committed HEAD (git archive) with this bench/
#                  directory, instead of the working tree (which others may be
#                  editing)
#   --runs N       rounds of every throughput configuration (default 5)
#   --duration D   measured seconds per run, after 1 s of warm-up (default 4s)
#   --out DIR      where results go (default a new temporary directory)
#   --no-gotest    skip the Go testing benchmarks and benchstat
#   --profile      also write CPU profiles of wasmcp's call path (stdio with
#                  the C and Go plugin, HTTP with the C plugin) and print CPU
#                  by category and the top functions
#
# Every configuration runs once per round, in an order rotated each round,
# so slow phases of a shared machine spread over all of them. Binaries are
# built with `go build`; the plugins are the committed .wasm files
# (bench/plugins/build.sh rebuilds them). About 10 minutes with the defaults.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"

runs=5 dur=4s out="" gotest=1 profile=0 snapshot=0
args=("$@")
# shellcheck source=lib.sh
. "$here/lib.sh"
bench_args 20 "$@"
for a in "${rest[@]}"; do
	case "$a" in
	--snapshot) snapshot=1 ;;
	--no-gotest) gotest=0 ;;
	--profile) profile=1 ;;
	*) echo "run.sh: unknown argument $a" >&2; exit 2 ;;
	esac
done

if [ $snapshot = 1 ]; then
	snap="$(mktemp -d)"
	trap 'rm -rf "$snap"' EXIT
	commit="$(git -C "$root" rev-parse HEAD)"
	git -C "$root" archive HEAD | tar -x -C "$snap"
	rm -rf "$snap/bench"
	cp -r "$here" "$snap/bench"
	echo "snapshot of $commit (+ working-tree bench/) in $snap" >&2
	rest=()
	for a in "${args[@]}"; do [ "$a" != --snapshot ] && rest+=("$a"); done
	WASMCP_BENCH_COMMIT="$commit" "$snap/bench/run.sh" "${rest[@]}"
	exit $?
fi

bench_out wasmcp-bench
bin="$out/bin" work="$out/work"
mkdir -p "$bin" "$work"
results="$out/results.jsonl"
: >"$results"

commit="${WASMCP_BENCH_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}"
dirty=""
[ -z "${WASMCP_BENCH_COMMIT:-}" ] && [ -n "$(git -C "$root" status --porcelain -- . ':!bench' 2>/dev/null)" ] && dirty=" + uncommitted changes"
{
	echo "wasmcp commit: $commit$dirty"
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "go: $(go env GOVERSION)  nproc: $(nproc)  cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/env.txt"

echo "== build" >&2
(cd "$root" && go build -o "$bin/wasmcp" ./cmd/wasmcp)
(cd "$here" && go build -o "$bin/" ./cmd/...)
load="$bin/load"
cecho="$here/plugins/cecho/cecho.wasm"
goecho="$here/plugins/goecho/goecho.wasm"
cspin="$here/plugins/cspin/cspin.wasm"
# The component counterpart of cecho: C, made a component with jco's WASI
# adapter (testdata/components/build.sh).
compecho="$root/testdata/components/c-echo.wasm"

# Configurations: default limits (4 instances per plugin) everywhere, a
# private compilation cache and in-memory kv. The HTTP configurations are the
# same: 64 concurrent clients must queue without a refusal in the default
# configuration (queues are shed by expected wait, not by a small count).
cache="$work/cache"
header() {
	printf '[server]\nname = "bench"\ncache_dir = "%s"\nkv_dir = ":memory:"\nlog_level = "%s"\n' "$cache" "${1:-warn}"
}
plugin() { # name path [extra toml lines]
	printf '[[plugins]]\nname = "%s"\npath = "%s"\n%s' "$1" "$2" "${3:-}"
}
{ header; plugin cecho "$cecho"; } >"$work/c.toml"
{ header; plugin goecho "$goecho"; } >"$work/go.toml"
{ header; plugin compecho "$compecho"; } >"$work/component.toml"
cp "$work/c.toml" "$work/c-http.toml"
cp "$work/go.toml" "$work/go-http.toml"
{ header error; plugin cecho "$cecho"; plugin cspin "$cspin" 'timeout = "1s"
'; } >"$work/runaway.toml"
{ header error; plugin cecho "$cecho"; plugin cspin "$cspin" 'timeout = "2s"
instances = 8
'; } >"$work/runaway8.toml"
"$load" copies -n 20 -o "$work/copies" "$cecho"
{
	header
	for i in $(seq -w 1 20); do plugin "p$i" "$work/copies/p$i.wasm" "prefix = \"p${i}_\"
"; done
} >"$work/cold20.toml"

wasmcp="$bin/wasmcp"
# Warm the compilation cache (each plugin once).
for cfg in c go component runaway runaway8 cold20; do
	"$load" coldstart -runs 1 -name warm -- "$wasmcp" serve --config "$work/$cfg.toml" >/dev/null
done

stdio_cfgs=(
	"stdio/bare|legacy|$bin/bareecho"
	"stdio/native|legacy|$bin/nativeserver"
	"stdio/wasmcp-c|legacy|$wasmcp serve --config $work/c.toml"
	"stdio/wasmcp-go|legacy|$wasmcp serve --config $work/go.toml"
	"stdio/wasmcp-component|legacy|$wasmcp serve --config $work/component.toml"
	"stdio/native-modern|modern|$bin/nativeserver"
	"stdio/wasmcp-c-modern|modern|$wasmcp serve --config $work/c.toml"
)
http_cfgs=(
	"http/bare|$bin/bareecho -http 127.0.0.1:0"
	"http/native|$bin/nativeserver -http 127.0.0.1:0"
	"http/wasmcp-c|$wasmcp serve --config $work/c-http.toml --http 127.0.0.1:0"
	"http/wasmcp-go|$wasmcp serve --config $work/go-http.toml --http 127.0.0.1:0"
	"http/wasmcp-component|$wasmcp serve --config $work/component.toml --http 127.0.0.1:0"
)

# A failed run (invalid responses, a crash) is reported at the end; its
# result line, if it got that far, is in the tables with its errors.
failed=()

echo "== stdio: 8 requests in flight, $runs rounds of 1 s warm-up + $dur" >&2
# stdio_run R NAME|MODE|CMD runs round R of one stdio configuration.
stdio_run() {
	local name mode cmd
	IFS='|' read -r name mode cmd <<<"$2"
	# shellcheck disable=SC2086
	"$load" stdio -name "$name" -mode "$mode" -n 8 -warmup 1s -d "$dur" -round "$1" -json "$results" -- $cmd
}
bench_rounds stdio_run "${stdio_cfgs[@]}"

echo "== HTTP: 64 keep-alive clients, stateless 2026-07-28, $runs rounds of 1 s warm-up + $dur" >&2
# http_run R NAME|CMD runs round R of one HTTP configuration.
http_run() {
	local name cmd
	IFS='|' read -r name cmd <<<"$2"
	# shellcheck disable=SC2086
	"$load" http -name "$name" -c 64 -warmup 1s -d "$dur" -round "$1" -json "$results" -- $cmd
}
bench_rounds http_run "${http_cfgs[@]}"

echo "== cold start (warm compilation cache)" >&2
"$load" coldstart -name "wasmcp, 20 C plugins" -runs 11 -expect-tools 20 -json "$results" -- "$wasmcp" serve --config "$work/cold20.toml" ||
	failed+=("coldstart 20 C plugins")
"$load" coldstart -name "wasmcp, 1 Go plugin" -runs 5 -expect-tools 1 -json "$results" -- "$wasmcp" serve --config "$work/go.toml" ||
	failed+=("coldstart 1 Go plugin")
"$load" coldstart -name "native Go SDK" -runs 5 -expect-tools 1 -json "$results" -- "$bin/nativeserver" ||
	failed+=("coldstart native")

echo "== runaway plugin (1 s deadline)" >&2
for n in 1 "$(nproc)"; do
	"$load" runaway -name "$n runaway(s)" -runaways "$n" -deadline 1s -baseline 2s -d 4s -json "$results" -- "$wasmcp" serve --config "$work/runaway.toml" ||
		failed+=("runaway $n")
done
# CPU isolation (bench/isolation.sh runs it alone, scheduler on and off): 8
# callers keep an 8-instance spinning plugin at its 2 s deadline.
"$load" runaway -name "8 runaways, 8 instances" -runaways 8 -deadline 2s -baseline 3s -d 6s -json "$results" -- "$wasmcp" serve --config "$work/runaway8.toml" ||
	failed+=("runaway 8x8")
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/env.txt"

if [ $gotest = 1 ]; then
	echo "== Go benchmarks (go test -bench . -count 6 -benchtime 500ms)" >&2
	(cd "$here" && WASMCP_BENCH_CACHE="$cache" go test -run '^$' -bench . -count 6 -benchtime 500ms -timeout 30m) | tee "$out/gobench.txt" ||
		failed+=("go test -bench")
	(cd "$here" && go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$out/gobench.txt") | tee "$out/benchstat.txt"
fi

if [ $profile = 1 ]; then
	echo "== CPU profiles of wasmcp's call path (in-process Go benchmarks)" >&2
	# A fixed amount of work per profile (one server start each).
	: >"$out/profiles.txt"
	for b in StdioCall/wasmcp-c:20000x StdioCall/wasmcp-go:3000x HTTPCall/wasmcp-c:20000x; do
		n="${b#*:}" b="${b%:*}"
		p="$(echo "$b" | tr / -)"
		if ! (cd "$here" && WASMCP_BENCH_CACHE="$cache" go test -run '^$' -bench "$b\$" -benchtime "$n" \
			-cpuprofile "$out/$p.prof" -o "$out/bench.test" | grep '^Benchmark') >>"$out/profiles.txt"; then
			failed+=("profile $b")
			continue
		fi
		{
			echo "--- $p: CPU by category (categories overlap)"
			"$here/profcat.sh" "$out/bench.test" "$out/$p.prof"
			echo "--- $p: top functions (cumulative)"
			go tool pprof -top -cum -nodecount 40 "$out/bench.test" "$out/$p.prof" 2>/dev/null | sed -n '6,50p'
		} >>"$out/profiles.txt"
	done
	cat "$out/profiles.txt"
fi

echo
echo "== summary ($out)"
{
	cat "$out/env.txt"
	echo
	"$load" summary "$results"
	if [ ${#failed[@]} -gt 0 ]; then
		echo
		echo "FAILED runs (see the log above): ${failed[*]}"
	fi
} | tee "$out/summary.md"
[ ${#failed[@]} -eq 0 ]
