#!/usr/bin/env bash
# Builds this directory's component fixtures with
# internal/component/testdata/build.sh (NAME.wat -> NAME.wasm), and
# flat.wasm from flat/ (core.wat, assembled with Debian's wat2wasm, and
# world.wit, embedded and made a component by wasm-tools, which checks
# the core signatures). --check builds into a temp dir and fails if a
# committed .wasm differs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
args=()
[ "${1:-}" = --check ] && args+=(--check)
"$root/internal/component/testdata/build.sh" "${args[@]}" "$here"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
wat2wasm "$here/flat/core.wat" -o "$tmp/core.wasm"
node "$here/flat/new.mjs" "$root/.cache/jco/node_modules/@bytecodealliance/jco-transpile" "$here/flat/world.wit" "$tmp/core.wasm" "$tmp/flat.wasm"
if [ "${1:-}" = --check ]; then
	cmp -s "$tmp/flat.wasm" "$here/flat.wasm" || { echo "flat.wasm differs from its source; run $0" >&2; exit 1; }
else
	cp "$tmp/flat.wasm" "$here/flat.wasm"
fi
