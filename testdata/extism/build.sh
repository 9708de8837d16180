#!/usr/bin/env bash
# Builds the Extism test plugins (see README.md) from source, each module
# next to its source:
#
#   NAME.wat        -> NAME.wasm   (wat2wasm)
#   NAME.c          -> NAME.wasm   (clang + wasi-libc, extism.h, reactor)
#   go/NAME/main.go -> go_NAME.wasm (GOOS=wasip1 -buildmode=c-shared, on
#                                   github.com/extism/go-pdk, pinned by
#                                   go/go.mod: never the server's dependency)
#
#   testdata/extism/build.sh           build in place
#   testdata/extism/build.sh --check   build into a temp dir and fail if a
#                                      committed .wasm differs
#
# Builds are reproducible: paths stripped, symbols and debug info removed,
# the Go toolchain pinned with GOTOOLCHAIN (default go1.26.8). Debian
# packages: wabt clang lld wasi-libc libclang-rt-14-dev-wasm32; go-pdk comes
# from the Go module proxy.
set -euo pipefail
# shellcheck source=../../scripts/wasmbuild.sh
. "$(dirname "$0")/../../scripts/wasmbuild.sh"
cd "$here"

wasm_setup 18 "$@"

# build_one SRC OUT builds the plugin whose source is SRC into OUT.
build_one() {
	case "$1" in
	go/*/main.go) (cd "$here/go" && wasm_go "$2" "./$(basename "$(dirname "$1")")" -mod=readonly) ;;
	*) wasm_src "$2" "$1" "$here" ;;
	esac
}

fail=0
for src in *.wat *.c go/*/main.go; do
	[ -e "$src" ] || continue
	case "$src" in go/*/main.go) name="go_$(basename "$(dirname "$src")")" ;; *) name="${src%.*}" ;; esac
	wasm_one "$here/$name.wasm" "$src" testdata/extism/build.sh
done
exit $fail
