# shellcheck shell=bash
# What the scripts that build committed .wasm files share (examples/build.sh,
# scripts/build-sdk-examples.sh, testdata/hostile/build.sh,
# testdata/extism/build.sh, bench/plugins/build.sh). Source it after setting root (the repository
# root); check is 1 for --check, else 0 (wasm_setup sets it); wasm_result
# sets fail=1 on a mismatch.

# wasm_setup LAST ARG... takes the one optional argument --check (anything
# else prints lines 2 to LAST of the script, found in here, as its usage
# and exits 2), pins the Go toolchain (GOTOOLCHAIN, default go1.26.8) and
# makes tmp, a directory removed on exit.
wasm_setup() {
	local last="$1"
	shift
	check=0
	case "${1:-}" in
	--check) check=1 ;;
	"") ;;
	*) sed -n "2,${last}p" "$here/$(basename "$0")"; exit 2 ;;
	esac
	export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.26.8}"
	tmp="$(mktemp -d)"
	# shellcheck disable=SC2064 # tmp is expanded now, on purpose
	trap "rm -rf '$tmp'" EXIT
}

# wasm_wat OUT SRC builds the WAT module SRC into OUT with wat2wasm; a
# first line ";; wat2wasm: FLAGS" adds FLAGS.
wasm_wat() {
	local flags
	flags="$(sed -n '1s/^;; wat2wasm: //p' "$2")"
	# shellcheck disable=SC2086 # FLAGS are words
	wat2wasm $flags -o "$1" "$2"
}

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
