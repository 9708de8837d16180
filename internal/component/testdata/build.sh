#!/usr/bin/env bash
# Builds the component fixtures from their text: NAME.wat -> NAME.wasm,
# with wasm-tools' parser from npm @bytecodealliance/jco-transpile
# (installed into .cache/jco if missing). --check builds into a temp
# dir and fails if a committed .wasm differs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
jco="$root/.cache/jco"
if [ ! -d "$jco/node_modules/@bytecodealliance/jco-transpile" ]; then
	mkdir -p "$jco"
	(cd "$jco" && npm install --no-audit --no-fund --loglevel=error @bytecodealliance/jco-transpile@0.15.0 >/dev/null)
fi
out="$here"
[ "${1:-}" = --check ] && out="$(mktemp -d)"
fail=0
for src in "$here"/*.wat; do
	name="$(basename "${src%.wat}")"
	node "$here/wat2component.mjs" "$jco/node_modules/@bytecodealliance/jco-transpile" "$src" "$out/$name.wasm"
	if [ "${1:-}" = --check ] && ! cmp -s "$out/$name.wasm" "$here/$name.wasm"; then
		echo "$name.wasm differs from its source; run internal/component/testdata/build.sh" >&2
		fail=1
	fi
done
exit $fail
