# shellcheck shell=bash
# What the scripts that build committed .wasm files share (examples/build.sh,
# scripts/build-sdk-examples.sh, testdata/hostile/build.sh,
# testdata/extism/build.sh, bench/plugins/build.sh). Source it first, by
# its path from the script's directory: it sets here, the script's
# directory, and root, the repository root. check is 1 for --check, else 0
# (wasm_setup sets it); wasm_result sets fail=1 on a mismatch.
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# wasm_setup LAST ARG... reads the script's arguments: --check sets
# check=1. In a script that takes directories (wasm_dirs=1 before the
# call) every other word is added to the array dirs, and -h or --help
# prints lines 2 to LAST of the script as its usage and exits 0;
# elsewhere anything but --check prints that usage and exits 2. Then it
# pins the Go toolchain (GOTOOLCHAIN, default go1.26.8) and makes tmp, a
# directory removed on exit.
wasm_setup() {
	local last="$1" a self="$here/$(basename "$0")"
	shift
	check=0
	dirs=()
	for a in "$@"; do
		case "$a" in
		--check) check=1 ;;
		-h | --help) [ "${wasm_dirs:-0}" = 1 ] && { sed -n "2,${last}p" "$self"; exit 0; } ;&
		*)
			[ "${wasm_dirs:-0}" = 1 ] || { sed -n "2,${last}p" "$self"; exit 2; }
			dirs+=("${a%/}")
			;;
		esac
	done
	export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.26.8}"
	tmp="$(mktemp -d)"
	# shellcheck disable=SC2064 # tmp is expanded now, on purpose
	trap "rm -rf '$tmp'" EXIT
}

# wasm_out TARGET is where to build the committed TARGET: TARGET itself,
# or with --check a file of its name in tmp.
wasm_out() {
	if [ "$check" = 1 ]; then echo "$tmp/$(basename "$1")"; else echo "$1"; fi
}

# wasm_go OUT PKG GOFLAGS builds the Go plugin PKG (a package path, e.g.
# ./dir, from the current directory's module) into OUT: GOOS=wasip1
# -buildmode=c-shared, reproducible (-trimpath, -buildvcs=false, no
# symbols or DWARF), with GOFLAGS set to GOFLAGS.
wasm_go() {
	GOOS=wasip1 GOARCH=wasm GOWASM= CGO_ENABLED=0 GOFLAGS="$3" \
		go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o "$1" "$2"
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

# wasm_src OUT SRC INCLUDE builds a WAT (wasm_wat) or C (wasm_c, headers
# from INCLUDE; a first line "// clang: FLAGS" gives FLAGS) source SRC
# into OUT.
wasm_src() {
	case "$2" in
	*.wat) wasm_wat "$1" "$2" ;;
	*.c) wasm_c "$1" "$3" "$(sed -n '1s|^// clang: ||p' "$2")" "$2" ;;
	*) echo "don't know how to build $2" >&2; return 1 ;;
	esac
}

# wasm_one TARGET SRC SCRIPT builds the committed TARGET from SRC with the
# script's build_one SRC OUT and reports it (see wasm_out, wasm_result).
wasm_one() {
	local out
	out="$(wasm_out "$1")"
	build_one "$2" "$out"
	wasm_result "$1" "$out" "$3"
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
