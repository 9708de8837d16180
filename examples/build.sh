#!/usr/bin/env bash
# Builds every Go example plugin (examples/go-*/ and examples/conformance/go-*/)
# into DIR/go-NAME.wasm:
#
#   examples/build.sh            build in place
#   examples/build.sh --check    build into a temp dir and fail if a committed
#                                .wasm differs from a fresh build
#   examples/build.sh DIR...     build (or check) only these directories
#
# Builds are reproducible: -trimpath removes file system paths, -s -w drop
# the symbol table and DWARF, -buildvcs=false keeps VCS state out, and the
# Go toolchain is pinned with GOTOOLCHAIN (default go1.26.8; the go command
# downloads it through the module proxy if the installed one differs).
# The C, Rust, AssemblyScript and WAT examples are built by
# scripts/build-sdk-examples.sh.
set -euo pipefail
# shellcheck source=../scripts/wasmbuild.sh
. "$(dirname "$0")/../scripts/wasmbuild.sh"
cd "$root"

wasm_dirs=1 wasm_setup 15 "$@"
if [ ${#dirs[@]} -eq 0 ]; then
	for d in examples/go-* examples/conformance/go-*; do
		[ -f "$d/main.go" ] && dirs+=("$d")
	done
fi

fail=0
for d in "${dirs[@]}"; do
	name="$(basename "$d")"
	out="$(wasm_out "$d/$name.wasm")"
	wasm_go "$out" "./$d" "${GOFLAGS:-}"
	wasm_result "$d/$name.wasm" "$out" examples/build.sh
done
exit $fail
