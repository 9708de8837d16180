#!/usr/bin/env bash
# Builds every example plugin written with the C, Rust and AssemblyScript
# SDKs, and the hand-written WAT examples, from source:
#
#   examples/c-*/     *.c      -> examples/c-NAME/c-NAME.wasm      (clang + wasi-libc)
#   examples/conformance/c-*/  same, for the conformance fixtures
#   examples/rust-*/  lib.rs   -> examples/rust-NAME/rust-NAME.wasm (Debian rustc, no cargo)
#   examples/as-*/    index.ts -> examples/as-NAME/as-NAME.wasm    (asc + wasi-shim)
#   examples/wat-*/   *.wat    -> examples/wat-NAME/wat-NAME.wasm  (wat2wasm)
#   sdk/sdktest/testdata/*/    the SDK test fixtures, same rules
#
#   scripts/build-sdk-examples.sh           build in place
#   scripts/build-sdk-examples.sh --check   build into a temp dir and fail if
#                                           any committed .wasm differs
#   scripts/build-sdk-examples.sh DIR...    build only these directories
#
# Builds are reproducible: paths are stripped (-ffile-prefix-map,
# --remap-path-prefix), symbols and debug info are removed, and tool
# versions are pinned (npm packages in .cache/npm; Debian packages by
# release). The npm packages are installed into .cache/npm if missing.
set -euo pipefail
# shellcheck source=wasmbuild.sh
. "$(dirname "$0")/wasmbuild.sh"
cd "$root"

wasm_dirs=1 wasm_setup 20 "$@"
if [ ${#dirs[@]} -eq 0 ]; then
	for d in examples/c-* examples/conformance/c-* examples/rust-* examples/as-* examples/wat-* sdk/sdktest/testdata/*; do
		[ -d "$d" ] && dirs+=("$d")
	done
fi

# Pinned AssemblyScript toolchain (npm).
AS_VERSION=0.28.20
WASI_SHIM_VERSION=0.1.0
npm_dir="$root/.cache/npm"
RUSTC=/usr/bin/rustc
# The WASI target of that rustc: wasm32-wasip1 (Rust 1.78+) or wasm32-wasi
# (older, e.g. Debian's 1.63), whichever it lists and has a std for.
rust_target() {
	local sysroot t targets
	sysroot="$("$RUSTC" --print sysroot)"
	# The list is read whole: `rustc … | grep -q` dies of SIGPIPE under
	# pipefail whenever grep stops reading first.
	targets="$("$RUSTC" --print target-list)"
	for t in wasm32-wasip1 wasm32-wasi; do
		if grep -qx "$t" <<<"$targets" && [ -d "$sysroot/lib/rustlib/$t" ]; then
			echo "$t"
			return
		fi
	done
	echo "$RUSTC has no wasm32-wasip1 or wasm32-wasi standard library (Debian: libstd-rust-dev-wasm32)" >&2
	return 1
}

need_as() {
	if [ ! -x "$npm_dir/node_modules/.bin/asc" ] ||
		! grep -q "\"version\": \"$AS_VERSION\"" "$npm_dir/node_modules/assemblyscript/package.json" 2>/dev/null; then
		echo "installing assemblyscript@$AS_VERSION @assemblyscript/wasi-shim@$WASI_SHIM_VERSION into .cache/npm" >&2
		mkdir -p "$npm_dir"
		(cd "$npm_dir" && npm install --no-audit --no-fund --no-save --prefix . \
			"assemblyscript@$AS_VERSION" "@assemblyscript/wasi-shim@$WASI_SHIM_VERSION" >/dev/null)
	fi
}

need_c() {
	# clang's wasm32 builtins live in a separate Debian package.
	if [ ! -e /usr/lib/llvm-14/lib/clang/14.0.6/lib/wasi/libclang_rt.builtins-wasm32.a ] &&
		! ls /usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a >/dev/null 2>&1; then
		echo "missing clang wasm32 builtins: apt-get install libclang-rt-14-dev-wasm32" >&2
		if [ "$(id -u)" = 0 ]; then
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libclang-rt-14-dev-wasm32 >/dev/null ||
				{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libclang-rt-14-dev-wasm32 >/dev/null; }
		else
			exit 1
		fi
	fi
}

# build_one DIR OUT: builds the plugin in DIR into the file OUT.
build_one() {
	local d="$1" out="$2" name kind
	name="$(basename "$d")"
	kind="${name%%-*}"
	# Fixtures under sdk/sdktest/testdata are named by language: c, rust,
	# as, wat, or LANG-WHAT (c-badtask) like the examples.
	case "$kind" in
	c)
		need_c
		wasm_c "$out" "$root/sdk/c" "" "$d"/*.c
		;;
	rust)
		local target
		target="$(rust_target)"
		"$RUSTC" --edition 2021 --target "$target" --crate-type cdylib -C opt-level=s -C panic=abort \
			-C lto -C codegen-units=1 -C strip=symbols -C debuginfo=0 \
			--remap-path-prefix "$root/"= --remap-path-prefix "$root"=. \
			--remap-path-prefix "$HOME"=~ \
			-o "$out" "$d/lib.rs"
		;;
	as)
		need_as
		local rel
		rel="$(realpath --relative-to="$d" "$npm_dir/node_modules")"
		(cd "$d" && "$npm_dir/node_modules/.bin/asc" index.ts \
			--config "$rel/@assemblyscript/wasi-shim/asconfig.json" \
			--optimizeLevel 3 --shrinkLevel 1 --runtime incremental \
			--path "$rel" -o "$out")
		;;
	wat)
		wat2wasm -o "$out" "$d"/*.wat
		;;
	*)
		echo "don't know how to build $d" >&2
		return 1
		;;
	esac
}

fail=0
for d in "${dirs[@]}"; do
	name="$(basename "$d")"
	case "$d" in sdk/sdktest/testdata/*) target="$d/plugin.wasm" ;; *) target="$d/$name.wasm" ;; esac
	out="$tmp/$(echo "$d" | tr / _).wasm"
	if ! build_one "$d" "$out"; then
		echo "FAIL build $d" >&2
		fail=1
		continue
	fi
	wasm_result "$target" "$out" scripts/build-sdk-examples.sh
done
exit $fail
