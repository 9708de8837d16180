#!/usr/bin/env bash
# Builds the hostile-plugin corpus (see README.md) from source, each
# module next to its source:
#
#   NAME.wat       -> NAME.wasm   (wat2wasm; a first line ";; wat2wasm: FLAGS"
#                                  adds FLAGS, e.g. --no-check for a module
#                                  that must be invalid)
#   NAME.c         -> NAME.wasm   (clang + wasi-libc, sdk/c, reactor, --stack-first;
#                                  -O2 --strip-all unless a first line
#                                  "// clang: FLAGS" gives FLAGS instead)
#   NAME/main.go   -> NAME.wasm   (GOOS=wasip1 -buildmode=c-shared, sdk/go)
#
#   testdata/hostile/build.sh           build in place
#   testdata/hostile/build.sh --check   build into a temp dir and fail if a
#                                       committed .wasm differs
#
# Builds are reproducible: paths are stripped (-ffile-prefix-map, -trimpath),
# symbols and debug info removed (but for debugtrap, whose line table
# is kept with relative paths), and the Go toolchain pinned with
# GOTOOLCHAIN (default go1.26.8). Debian packages: wabt clang lld wasi-libc
# libclang-rt-14-dev-wasm32.
set -euo pipefail
# shellcheck source=../../scripts/wasmbuild.sh
. "$(dirname "$0")/../../scripts/wasmbuild.sh"
cd "$here"

wasm_setup 21 "$@"

# build_one SRC OUT builds the plugin whose source is SRC into OUT.
build_one() {
	case "$1" in
	*/main.go) (cd "$root" && wasm_go "$2" "./testdata/hostile/$(dirname "$1")" "") ;;
	*) wasm_src "$2" "$1" "$root/sdk/c" ;;
	esac
}

fail=0
for src in *.wat *.c */main.go; do
	case "$src" in */main.go) name="$(dirname "$src")" ;; *) name="${src%.*}" ;; esac
	wasm_one "$here/$name.wasm" "$src" testdata/hostile/build.sh
done
exit $fail
