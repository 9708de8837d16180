#!/usr/bin/env bash
# Builds the fixtures of package wasip2's tests:
#
#   js-wasi/app.js + js-wasi/world.wit -> js-wasi.wasm   (componentize-js;
#                                         SpiderMonkey inside, about 12 MB)
#   wasi-all/build.mjs -> wasi-all-{0.2.0,0.2.3,0.2.12}.wasm  (jco's WASI
#                                         WIT, a dummy core module importing
#                                         every function)
#
#   hostapi/wasip2/testdata/build.sh [DIR]   (DIR: build there, not in place)
#
# The npm packages are pinned by npm/package-lock.json and installed with
# npm ci into .cache/wasip2-npm at the repository root (also the reference
# host of cmd/wasmcp's TestComponentMatchesJco: jco-transpile and
# preview2-shim). The build is not bit-for-bit reproducible for
# js-wasi.wasm (the initialised engine snapshot differs from run to run),
# so there is no --check: the tests check what the components do, and
# scripts/check-js-components.sh rebuilds them and compares their WIT and
# tools.
set -euo pipefail
# shellcheck source=../../../scripts/wasmbuild.sh
. "$(dirname "$0")/../../../scripts/wasmbuild.sh"
cd "$here"
npm_dir="$root/.cache/wasip2-npm"
# The marker .installed, a copy of the lockfile, is written last (as
# scripts/conformance.sh and cmd/wasmcp's differential test do).
if ! cmp -s npm/package-lock.json "$npm_dir/.installed"; then
	rm -rf "$npm_dir"
	mkdir -p "$npm_dir"
	cp npm/package.json npm/package-lock.json "$npm_dir/"
	(cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
	cp npm/package-lock.json "$npm_dir/.installed"
fi
out="${1:-.}" # DIR: build into DIR instead (scripts/check-js-components.sh)
node wasi-all/build.mjs "$npm_dir/node_modules/@bytecodealliance/jco" "$out"
node js-wasi/build.mjs "$npm_dir/node_modules/@bytecodealliance/componentize-js" "$out/js-wasi.wasm"
