#!/usr/bin/env bash
# Builds the component corpus from source: each NAME/ holds a world.wit
# and a core module's source, which become NAME.wasm, a component made as
# `jco new` makes one (WIT embedded, wrapped with the WASI preview 1
# reactor adapter), with the WIT doc comments as a package-docs section:
#
#   NAME/text.c + NAME/world.wit  -> NAME.wasm   (clang + wasi-libc, reactor)
#   NAME/lib.rs + NAME/world.wit  -> NAME.wasm   (Debian rustc, wasm32-wasi)
#
# and NAME.ref.wit, the WIT wasm-tools (jco-transpile's componentWit)
# prints for it, the reference internal/component's tests compare the
# WIT view with.
#
#   testdata/components/build.sh           build in place
#   testdata/components/build.sh --check   build into a temp dir and fail
#                                          if a committed file differs
#
# npm packages go into .cache/ at the repository root, pinned:
# @bytecodealliance/jco-transpile 0.15.0 (wasm-tools' embed, new, wit)
# and, unpacked, @bytecodealliance/jco 1.35.0 for the adapter it ships
# (lib/wasi_snapshot_preview1.reactor.wasm). Debian packages: clang lld
# wasi-libc nodejs, rustc with libstd-rust-dev-wasm32 (/usr/bin/rustc: the
# rustup one may lack the target).
set -euo pipefail
# shellcheck source=../../scripts/wasmbuild.sh
. "$(dirname "$0")/../../scripts/wasmbuild.sh"
cd "$here"

wasm_setup 23 "$@"

jco="$root/.cache/jco"
if [ ! -d "$jco/node_modules/@bytecodealliance/jco-transpile" ]; then
	mkdir -p "$jco"
	(cd "$jco" && npm install --no-audit --no-fund --loglevel=error @bytecodealliance/jco-transpile@0.15.0 >/dev/null)
fi
transpile="$jco/node_modules/@bytecodealliance/jco-transpile"
pkg="$root/.cache/jco-pkg"
adapter="$pkg/package/lib/wasi_snapshot_preview1.reactor.wasm"
if [ ! -f "$adapter" ]; then
	mkdir -p "$pkg"
	(cd "$pkg" && npm pack --silent @bytecodealliance/jco@1.35.0 >/dev/null && tar xzf bytecodealliance-jco-1.35.0.tgz package/lib/wasi_snapshot_preview1.reactor.wasm)
fi
rustc=/usr/bin/rustc
[ -x "$rustc" ] || rustc=rustc

# build_one DIR OUT builds component DIR into OUT.
build_one() {
	local core="$tmp/$1.core.wasm"
	if [ -f "$1/text.c" ]; then
		wasm_c "$core" "$here/$1" "" "$1/text.c"
	else
		(cd "$1" && "$rustc" --target wasm32-wasi --crate-type cdylib -C opt-level=s -C lto -C codegen-units=1 \
			-C strip=symbols --remap-path-prefix="$here/$1"=. -o "$core" lib.rs)
	fi
	node "$here/new.mjs" "$transpile" "$adapter" "$1/world.wit" "$core" "$2"
}

fail=0
for wit in */world.wit; do
	name="$(dirname "$wit")"
	wasm_one "$here/$name.wasm" "$name" testdata/components/build.sh
	out="$(wasm_out "$here/$name.ref.wit")"
	node "$here/wit.mjs" "$transpile" "$(wasm_out "$here/$name.wasm")" >"$out"
	wasm_result "$here/$name.ref.wit" "$out" testdata/components/build.sh
done
exit $fail
