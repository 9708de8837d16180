#!/usr/bin/env bash
# CPU isolation between plugins (issue: a runaway plugin must not slow the
# others). In one run of each round, on one server: the C echo plugin is
# called sequentially alone, then while 8 callers keep the spinning C
# plugin (8 instances, 2 s deadline) at its deadline. Each round runs the
# same measurement with the guest-CPU scheduler on (the default) and off
# ([limits] background_cpus = -1), alternating, and the script prints the
# medians over the rounds: echo p50/p99 alone and under attack, their
# ratios, and the runaways' overshoot past their deadline.
#
#   bench/isolation.sh [--runs N] [--duration D] [--out DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
runs=3 dur=6s out=""
# shellcheck source=lib.sh
. "$here/lib.sh"
bench_args 11 "$@"
bench_no_rest
bench_out wasmcp-isolation
mkdir -p "$out/bin"
(cd "$root" && go build -o "$out/bin/" ./cmd/wasmcp)
(cd "$here" && go build -o "$out/bin/" ./cmd/load)
for mode in on off; do
	bg=0
	[ $mode = off ] && bg=-1
	cat >"$out/$mode.toml" <<TOML
[server]
name = "bench"
cache_dir = "$out/cache"
kv_dir = ":memory:"
log_level = "error"
[limits]
background_cpus = $bg
[[plugins]]
name = "cecho"
path = "$here/plugins/cecho/cecho.wasm"
[[plugins]]
name = "cspin"
path = "$here/plugins/cspin/cspin.wasm"
timeout = "2s"
instances = 8
TOML
done
results="$out/results.jsonl"
: >"$results"
for r in $(seq 1 "$runs"); do
	for mode in on off; do
		"$out/bin/load" runaway -name "scheduler $mode" -runaways 8 -deadline 2s -baseline 3s -d "$dur" \
			-json "$results" -- "$out/bin/wasmcp" serve --config "$out/$mode.toml"
	done
done
python3 - "$results" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    x = json.loads(line)
    rows.setdefault(x["name"], []).append(x)
med = lambda xs: statistics.median(xs)
print("\n| scheduler | runs | echo p50 alone | p50 under attack | ratio | echo p99 alone | p99 under attack | ratio | runaways -32001 | overshoot p50 / max |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for name, rs in rows.items():
    b50 = med([r["echo_baseline"]["p50_us"] for r in rs]); d50 = med([r["echo_during"]["p50_us"] for r in rs])
    b99 = med([r["echo_baseline"]["p99_us"] for r in rs]); d99 = med([r["echo_during"]["p99_us"] for r in rs])
    r50 = med([r["echo_during"]["p50_us"] / r["echo_baseline"]["p50_us"] for r in rs])
    r99 = med([r["echo_during"]["p99_us"] / r["echo_baseline"]["p99_us"] for r in rs])
    to = sum(r["timed_out"] for r in rs); sp = sum(r["spins"] for r in rs)
    o50 = med([r["overshoot_p50_ms"] for r in rs]); omax = max(r["overshoot_max_ms"] for r in rs)
    print(f"| {name.split()[-1]} | {len(rs)} | {b50:.0f} µs | {d50:.0f} µs | **{r50:.1f}×** | {b99:.0f} µs | {d99:.0f} µs | **{r99:.1f}×** | {to}/{sp} | {o50:.1f} / {omax:.1f} ms |")
PY
echo "results in $out" >&2
