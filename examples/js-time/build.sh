#!/usr/bin/env bash
# Builds js-time.wasm from app.js and world.wit with componentize-js
# (SpiderMonkey inside: about 12 MB). The npm packages are those pinned by
# hostapi/wasip2/testdata/npm, installed with npm ci into .cache/wasip2-npm
# at the repository root (as hostapi/wasip2/testdata/build.sh does).
#
#   examples/js-time/build.sh [OUT.wasm]   (OUT: write there, not in place)
#
# componentize-js does not build bit for bit the same twice (the engine
# snapshot it takes differs from run to run), so there is no --check: the
# tests check what the component does.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
lock="$root/hostapi/wasip2/testdata/npm/package-lock.json"
npm_dir="$root/.cache/wasip2-npm"
if ! cmp -s "$lock" "$npm_dir/.installed"; then
	rm -rf "$npm_dir"
	mkdir -p "$npm_dir"
	cp "$root/hostapi/wasip2/testdata/npm/package.json" "$lock" "$npm_dir/"
	(cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
	cp "$lock" "$npm_dir/.installed"
fi
out="${1:-$here/js-time.wasm}"
node "$here/build.mjs" "$npm_dir/node_modules/@bytecodealliance/componentize-js" "$out"
echo "wrote $out ($(wc -c <"$out") bytes)"
