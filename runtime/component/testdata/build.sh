#!/usr/bin/env bash
# Builds this directory's component fixtures with
# internal/component/testdata/build.sh (NAME.wat -> NAME.wasm); flat.wasm
# and layout.wasm from flat/ and layout/ (core.wat, assembled with
# Debian's wat2wasm, and world.wit, embedded and made a component by
# wasm-tools, which checks the core signatures); and layout.golden.json,
# what jco (the reference host) lifts from layout.wasm. --check builds
# into a temp dir and fails if a committed file differs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
args=()
[ "${1:-}" = --check ] && args+=(--check)
"$root/internal/component/testdata/build.sh" "${args[@]}" "$here"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
transpile="$root/.cache/jco/node_modules/@bytecodealliance/jco-transpile"
# world DIR makes $tmp/DIR.wasm of DIR/core.wat and DIR/world.wit.
world() {
	wat2wasm "$here/$1/core.wat" -o "$tmp/$1.core.wasm"
	node "$here/flat/new.mjs" "$transpile" "$here/$1/world.wit" "$tmp/$1.core.wasm" "$tmp/$1.wasm"
}
world flat
world layout
node "$here/layout/lift.mjs" "$transpile" "$tmp/layout.wasm" >"$tmp/layout.golden.json"
for f in flat.wasm layout.wasm layout.golden.json; do
	if [ "${1:-}" = --check ]; then
		cmp -s "$tmp/$f" "$here/$f" || { echo "$f differs from its source; run $0" >&2; exit 1; }
	else
		cp "$tmp/$f" "$here/$f"
	fi
done
