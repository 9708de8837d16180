# shellcheck shell=bash
# What the scripts that build committed .wasm files share (examples/build.sh,
# scripts/build-sdk-examples.sh, testdata/hostile/build.sh,
# testdata/extism/build.sh). Source it after setting root (the repository
# root) and check (1 for --check, else 0); wasm_result sets fail=1 on a
# mismatch.

# wasm_c OUT INCLUDE FLAGS SRC... builds the C plugin SRC... with clang and
# wasi-libc into OUT: a reactor, the stack first, warnings as errors, the
# repository's paths stripped, sdk/c-style headers from INCLUDE. FLAGS is
# one string of words for the optimisation and stripping, "" for the
# default -O2 -Wl,--strip-all.
wasm_c() {
	local out="$1" inc="$2" flags="${3:--O2 -Wl,--strip-all}"
	shift 3
	# shellcheck disable=SC2086 # FLAGS are words
	clang --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor $flags \
		-Wall -Wextra -Werror -ffile-prefix-map="$root/"= -ffile-prefix-map="$root"=. \
		-Wl,--stack-first -I"$inc" -o "$out" "$@"
}

# wasm_result TARGET OUT SCRIPT reports a module built into OUT for the
# committed TARGET (shown relative to root): with --check, "ok" if they
# are the same bytes, else a FAIL line naming SCRIPT to rerun (and
# fail=1); without, OUT is copied to TARGET if it is elsewhere, and
# "built".
wasm_result() {
	local target="$1" out="$2" script="$3" shown="${1#"$root"/}"
	if [ "$check" = 1 ]; then
		if [ ! -f "$target" ]; then
			echo "FAIL $shown is not committed; run $script and commit" >&2
			fail=1
		elif ! cmp -s "$out" "$target"; then
			echo "FAIL $shown differs from a fresh build ($(stat -c %s "$target") vs $(stat -c %s "$out") bytes); run $script and commit" >&2
			fail=1
		else
			echo "ok   $shown ($(stat -c %s "$target") bytes)"
		fi
		return
	fi
	[ "$out" -ef "$target" ] || cp "$out" "$target"
	echo "built $shown ($(stat -c %s "$target") bytes)"
}
