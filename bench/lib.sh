# shellcheck shell=bash
# What the benchmark scripts share (bench/run.sh, bench/cluster.sh,
# bench/isolation.sh). Source it after setting their defaults of runs, dur
# and out.

# bench_args LAST ARG... reads the options every benchmark script takes:
# --runs N, --duration D and --out DIR (into runs, dur and out), and -h or
# --help, which prints lines 2 to LAST of the script as its usage and
# exits 0. Every other argument is left, in order, in the array rest.
bench_args() {
	local last="$1"
	shift
	rest=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--runs) runs="$2"; shift ;;
		--duration) dur="$2"; shift ;;
		--out) out="$2"; shift ;;
		-h | --help) sed -n "2,${last}p" "$0"; exit 0 ;;
		*) rest+=("$1") ;;
		esac
		shift
	done
}

# bench_no_rest fails (exit 2) with the first argument bench_args left, for
# a script that takes no others.
bench_no_rest() {
	if [ ${#rest[@]} -gt 0 ]; then
		echo "$(basename "$0"): unknown argument ${rest[0]}" >&2
		exit 2
	fi
}

# bench_order R CFG... sets the array order to the CFGs rotated by R, the
# order of round R: every configuration runs once per round, and slow
# phases of a shared machine spread over all of them.
bench_order() {
	local r="$1" k
	shift
	local cfgs=("$@")
	order=()
	for k in "${!cfgs[@]}"; do
		order+=("${cfgs[$(((k + r) % ${#cfgs[@]}))]}")
	done
}

# bench_rounds RUN CFG... runs RUN R CFG for each configuration CFG in
# each of the runs rounds R, in round R's order (bench_order). A run that
# fails is added to the array failed as "NAME (round R)", NAME being CFG
# up to its first |.
bench_rounds() {
	local run="$1" r cfg
	shift
	for r in $(seq 1 "$runs"); do
		bench_order "$r" "$@"
		for cfg in "${order[@]}"; do
			"$run" "$r" "$cfg" || failed+=("${cfg%%|*} (round $r)")
		done
	done
}

# bench_out NAME makes the results directory out, a new temporary one
# (NAME-XXXXXX) when --out was not given, and makes the path absolute.
bench_out() {
	[ -n "$out" ] || out="$(mktemp -d -t "$1-XXXXXX")"
	mkdir -p "$out"
	out="$(cd "$out" && pwd)"
}
