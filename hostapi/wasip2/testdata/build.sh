#!/usr/bin/env bash
# Builds the JavaScript fixtures of package wasip2's tests with
# componentize-js: js-wasi/app.js + js-wasi/world.wit -> js-wasi.wasm
# (SpiderMonkey inside, about 12 MB).
#
#   hostapi/wasip2/testdata/build.sh
#
# The npm packages are pinned by npm/package-lock.json and installed with
# npm ci into .cache/wasip2-npm at the repository root. The build is not
# bit-for-bit reproducible (the initialised engine snapshot differs from
# run to run), so there is no --check: the tests check what the
# component does.
set -euo pipefail
# shellcheck source=../../../scripts/wasmbuild.sh
. "$(dirname "$0")/../../../scripts/wasmbuild.sh"
cd "$here"
npm_dir="$root/.cache/wasip2-npm"
if [ ! -d "$npm_dir/node_modules/@bytecodealliance/componentize-js" ]; then
	mkdir -p "$npm_dir"
	cp npm/package.json npm/package-lock.json "$npm_dir/"
	(cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
node js-wasi/build.mjs "$npm_dir/node_modules/@bytecodealliance/componentize-js" js-wasi.wasm
