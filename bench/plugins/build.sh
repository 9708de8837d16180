#!/usr/bin/env bash
# Builds the benchmark plugins in place (the .wasm files are committed):
#
#   cecho/cecho.wasm    C echo   (clang + wasi-libc, sdk/c)
#   cspin/cspin.wasm    C runaway loop, for the deadline check
#   goecho/goecho.wasm  Go echo  (GOOS=wasip1 -buildmode=c-shared, sdk/go)
#
# Debian packages for C: clang lld wasi-libc libclang-rt-14-dev-wasm32.
set -euo pipefail
# shellcheck source=../../scripts/wasmbuild.sh
. "$(dirname "$0")/../../scripts/wasmbuild.sh"
cd "$here"

for name in cecho cspin; do
	wasm_c "$name/$name.wasm" "$root/sdk/c" "" "$name"/*.c
	echo "built $name/$name.wasm ($(stat -c %s "$name/$name.wasm") bytes)"
done

(cd goecho && wasm_go goecho.wasm . "${GOFLAGS:-}")
echo "built goecho/goecho.wasm ($(stat -c %s goecho/goecho.wasm) bytes)"
