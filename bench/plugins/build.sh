#!/usr/bin/env bash
# Builds the benchmark plugins in place (the .wasm files are committed):
#
#   cecho/cecho.wasm    C echo   (clang + wasi-libc, sdk/c)
#   cspin/cspin.wasm    C runaway loop, for the deadline check
#   goecho/goecho.wasm  Go echo  (GOOS=wasip1 -buildmode=c-shared, sdk/go)
#
#   bench/plugins/build.sh           build in place
#   bench/plugins/build.sh --check   build into a temp dir and fail if a
#                                    committed .wasm differs
#
# Debian packages for C: clang lld wasi-libc libclang-rt-14-dev-wasm32.
set -euo pipefail
# shellcheck source=../../scripts/wasmbuild.sh
. "$(dirname "$0")/../../scripts/wasmbuild.sh"
cd "$here"

wasm_setup 12 "$@"

# build_one SRC OUT builds the plugin whose source is in directory SRC into OUT.
build_one() {
	case "$1" in
	goecho) (cd goecho && wasm_go "$2" . "${GOFLAGS:-}") ;;
	*) wasm_c "$2" "$root/sdk/c" "" "$1"/*.c ;;
	esac
}

fail=0
for name in cecho cspin goecho; do
	wasm_one "$here/$name/$name.wasm" "$name" bench/plugins/build.sh
done
exit $fail
