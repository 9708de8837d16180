#!/usr/bin/env bash
# Rebuilds the committed JavaScript components from source
# (hostapi/wasip2/testdata's js-wasi and wasi-all-*, examples/js-time)
# into a temporary directory and checks that each rebuilt component is
# the committed one as a host sees it: the same WIT world and the same
# tools (names, descriptions, schemas), by `wasmcp inspect --json`.
# componentize-js does not build the same bytes twice (its engine
# snapshot differs from run to run), so the bytes are not compared; the
# tests check what the committed components do. Run by scripts/test.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
hostapi/wasip2/testdata/build.sh "$tmp" >/dev/null
examples/js-time/build.sh "$tmp/js-time.wasm" >/dev/null
go build -o "$tmp/wasmcp" ./cmd/wasmcp
# view FILE prints the WIT world and the tools of a component.
view() {
	"$tmp/wasmcp" inspect --json "$1" | node -e '
		let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
			const r = JSON.parse(s);
			process.stdout.write(JSON.stringify({ wit: r.wit, tools: r.tools ?? [] }, null, 1) + "\n");
		});'
}
fail=0
for pair in hostapi/wasip2/testdata/js-wasi.wasm:js-wasi.wasm \
	hostapi/wasip2/testdata/wasi-all-0.2.0.wasm:wasi-all-0.2.0.wasm \
	hostapi/wasip2/testdata/wasi-all-0.2.3.wasm:wasi-all-0.2.3.wasm \
	hostapi/wasip2/testdata/wasi-all-0.2.12.wasm:wasi-all-0.2.12.wasm \
	examples/js-time/js-time.wasm:js-time.wasm; do
	committed="${pair%%:*}" rebuilt="$tmp/${pair#*:}"
	if diff <(view "$committed") <(view "$rebuilt") >"$tmp/diff"; then
		echo "ok   $committed (its WIT and tools match a fresh build)"
	else
		echo "FAIL $committed differs from a fresh build of its source:" >&2
		head -40 "$tmp/diff" >&2
		fail=1
	fi
done
exit $fail
