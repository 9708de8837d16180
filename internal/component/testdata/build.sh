#!/usr/bin/env bash
# Builds the component fixtures from their text: NAME.wat -> NAME.wasm,
# with wasm-tools' parser from npm @bytecodealliance/jco-transpile
# (installed into .cache/jco if missing). --check builds into a temp
# dir and fails if a committed .wasm differs. An optional DIR builds
# that directory's fixtures instead of this one's:
#   build.sh [--check] [DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
jco="$root/.cache/jco"
if [ ! -d "$jco/node_modules/@bytecodealliance/jco-transpile" ]; then
	mkdir -p "$jco"
	(cd "$jco" && npm install --no-audit --no-fund --loglevel=error @bytecodealliance/jco-transpile@0.15.0 >/dev/null)
fi
check=
[ "${1:-}" = --check ] && { check=1; shift; }
src_dir="$(cd "${1:-$here}" && pwd)"
out="$src_dir"
[ -n "$check" ] && out="$(mktemp -d)"
fail=0
for src in "$src_dir"/*.wat; do
	name="$(basename "${src%.wat}")"
	node "$here/wat2component.mjs" "$jco/node_modules/@bytecodealliance/jco-transpile" "$src" "$out/$name.wasm"
	if [ -n "$check" ] && ! cmp -s "$out/$name.wasm" "$src_dir/$name.wasm"; then
		echo "$src_dir/$name.wasm differs from its source; run its build.sh" >&2
		fail=1
	fi
done
exit $fail
