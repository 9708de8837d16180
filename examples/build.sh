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
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# shellcheck source=../scripts/wasmbuild.sh
. "$root/scripts/wasmbuild.sh"

export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.26.8}"
export GOOS=wasip1 GOARCH=wasm GOWASM= CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-}"

check=0
dirs=()
for a in "$@"; do
	case "$a" in
	--check) check=1 ;;
	-h | --help) sed -n '2,17p' "$0"; exit 0 ;;
	*) dirs+=("${a%/}") ;;
	esac
done
if [ ${#dirs[@]} -eq 0 ]; then
	for d in examples/go-* examples/conformance/go-*; do
		[ -f "$d/main.go" ] && dirs+=("$d")
	done
fi

tmp=""
if [ $check = 1 ]; then
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
fi

fail=0
for d in "${dirs[@]}"; do
	name="$(basename "$d")"
	out="$d/$name.wasm"
	[ $check = 1 ] && out="$tmp/$name.wasm"
	go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o "$out" "./$d"
	wasm_result "$d/$name.wasm" "$out" examples/build.sh
done
exit $fail
