#!/usr/bin/env bash
# Start-up and idle cost of `wasmcp serve` with many plugins
# (docs/performance.md, "Start-up"): for 0, 1, 8, 32 and 100 plugins in C,
# Rust, Go and a mix of the three, and for the 7 bundled examples, cold
# (empty cache) and warm: the time from exec to the initialize answer, to
# tools/list listing every tool and to the first tools/call's answer, the
# RSS after tools/list, and the time until every plugin has loaded (those
# listed from their cached manifests load after tools/list) and the RSS
# then.
#
#   bench/startup.sh [--runs N] [--old REV] [--sets c,rust,go,mix,bundled] [--sizes 0,1,8,32,100] [--no-cold]
#
#   --old REV   also measure REV (a git revision) side by side: each row is
#               measured for REV and for the working tree, one after the
#               other
#
# Each plugin is a copy of one example module under its own name and
# prefix (p0_, p1_, ...), so that the tools do not collide. Not run by CI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
runs=3 old="" sets="c,rust,go,mix,bundled" sizes="0,1,8,32,100" cold=1
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs="$2"; shift 2 ;;
	--old) old="$2"; shift 2 ;;
	--sets) sets="$2"; shift 2 ;;
	--sizes) sizes="$2"; shift 2 ;;
	--no-cold) cold=0; shift ;;
	*) echo "startup.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/wasmcp-new" ./cmd/wasmcp)
(cd "$here" && go build -o "$work/startup" ./cmd/startup)
bins=("new=$work/wasmcp-new")
if [ -n "$old" ]; then
	git -C "$root" worktree add -q --detach "$work/old-tree" "$old"
	(cd "$work/old-tree" && go build -o "$work/wasmcp-old" ./cmd/wasmcp)
	git -C "$root" worktree remove --force "$work/old-tree"
	bins=("old=$work/wasmcp-old" "new=$work/wasmcp-new")
fi

# module, tool to call and its arguments, per language.
declare -A mod call args
mod[c]=bench/plugins/cecho/cecho.wasm call[c]=echo args[c]='{"text":"hi"}'
mod[rust]=examples/rust-dates/rust-dates.wasm call[rust]=iso_week args[rust]='{"date":"2026-12-02"}'
mod[go]=examples/go-text/go-text.wasm call[go]=slugify args[go]='{"text":"Hello World"}'
mix=("${mod[c]}" "${mod[rust]}" "${mod[go]}")
bundled=(examples/go-text/go-text.wasm examples/go-notes/go-notes.wasm examples/go-fetch/go-fetch.wasm
	examples/c-hash/c-hash.wasm examples/rust-dates/rust-dates.wasm examples/as-calc/as-calc.wasm examples/wat-ping/wat-ping.wasm)

# config SET N writes a configuration serving N plugins of SET and prints
# its path; the mix cycles through C, Rust and Go, and the bundled set is
# the 7 examples once each, whatever N.
config() {
	local set=$1 n=$2 dir="$work/$1-$2"
	mkdir -p "$dir"
	printf '[server]\nkv_dir = ":memory:"\n' >"$dir/wasmcp.toml"
	[ "$set" = bundled ] && n=${#bundled[@]}
	for ((i = 0; i < n; i++)); do
		local m
		case "$set" in
		mix) m=${mix[$((i % ${#mix[@]}))]} ;;
		bundled) m=${bundled[$i]} ;;
		*) m=${mod[$set]} ;;
		esac
		cp "$root/$m" "$dir/p$i.wasm"
		printf '[[plugins]]\nname = "p%d"\npath = "p%d.wasm"\nprefix = "p%d_"\n' $i $i $i >>"$dir/wasmcp.toml"
		case "$m" in *go-notes* | *go-fetch* | *as-calc*) printf '[plugins.grants]\nkv = true\n' >>"$dir/wasmcp.toml" ;; esac
	done
	echo "$dir/wasmcp.toml"
}

# count_tools CONFIG prints how many tools the configuration serves, from
# one untimed run.
count_tools() {
	"$work/startup" -bin "$work/wasmcp-new" -config "$1" -runs 1 -label x 2>/dev/null | awk -F'|' '{gsub(/ /, "", $8); print $8}'
}

echo "| plugins | cache | initialize | tools/list | first call | RSS | tools | all loaded | RSS loaded | binary |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
IFS=, read -ra setlist <<<"$sets"
IFS=, read -ra sizelist <<<"$sizes"
for set in "${setlist[@]}"; do
	for n in "${sizelist[@]}"; do
		if [ "$set" = bundled ]; then
			[ "$n" = "${sizelist[0]}" ] || continue
			n=${#bundled[@]}
		fi
		cfg=$(config "$set" "$n")
		want=$(count_tools "$cfg")
		callargs=()
		if [ "$n" -gt 0 ]; then
			case "$set" in
			mix) callargs=(-call "p0_${call[c]}" -args "${args[c]}") ;;
			bundled) callargs=(-call p0_slugify -args "${args[go]}") ;;
			*) callargs=(-call "p0_${call[$set]}" -args "${args[$set]}") ;;
			esac
		fi
		modes=(warm)
		[ $cold = 1 ] && modes=(cold warm)
		for m in "${modes[@]}"; do
			flags=()
			[ "$m" = cold ] && flags=(-cold)
			for b in "${bins[@]}"; do
				"$work/startup" -bin "${b#*=}" -config "$cfg" -tools "$want" -plugins "$n" "${callargs[@]}" -runs "$runs" "${flags[@]}" \
					-label "$n $set" | sed "s/\$/ ${b%%=*} |/"
			done
		done
	done
done
