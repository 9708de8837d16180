#!/usr/bin/env bash
# The wall-clock tests (internal/testutil.WallClock): the Test functions
# whose first statement is testutil.WallClock(t), with a comment saying
# why if any.
#
#   scripts/wallclock-tests.sh --list   one "package-dir TestName" a line
#   scripts/wallclock-tests.sh          run them: one go test -race over their packages
#
# scripts/test.sh runs every other test with WASMCP_WALLCLOCK=skip (which
# makes these skip), then this: so each test runs once. It fails if a
# testutil.WallClock call is not where it finds them, since that test
# would then run in neither step.
set -euo pipefail
cd "$(dirname "$0")/.."

list() {
	git ls-files -- '*_test.go' ':!:interop/**' ':!:deploy/**' | xargs awk '
		/^func Test[A-Za-z0-9_]*\(t \*testing\.T\) \{$/ { name = $2; sub(/\(.*/, "", name); at = FNR + 1; next }
		FNR == at && /^\ttestutil\.WallClock\(t\)( \/\/ .*)?$/ { d = FILENAME; sub(/\/[^\/]*$/, "", d); print d, name }
	' | sort
}

tests=$(list)
calls=$( (git grep -c 'testutil\.WallClock(t)' -- '*_test.go' || true) | awk -F: '{ n += $2 } END { print n + 0 }')
found=$(printf '%s' "$tests" | grep -c . || true)
if [ "$calls" != "$found" ]; then
	echo "wallclock-tests.sh: $calls calls of testutil.WallClock(t) in test files, $found found as the first statement of a Test function:" >&2
	git grep -n -B1 'testutil\.WallClock(t)' -- '*_test.go' >&2
	exit 1
fi

if [ "${1:-}" = "--list" ]; then
	printf '%s\n' "$tests"
	exit 0
fi

# One go test for all their packages, so that the packages run in
# parallel as in the go test step. Its -run pattern names tests, not
# packages: so each wall-clock test's name must be no other test's in
# those packages.
dirs=$(printf '%s\n' "$tests" | awk '{ print $1 }' | uniq)
names=$(printf '%s\n' "$tests" | awk '{ print $2 }')
dups=$(for d in $dirs; do git ls-files -- "$d/*_test.go" | awk -F/ -v d="$d" 'NF == split(d, x, "/") + 1'; done |
	xargs awk '/^func Test[A-Za-z0-9_]*\(t \*testing\.T\) \{$/ { n = $2; sub(/\(.*/, "", n); print n }' |
	sort | uniq -d | grep -Fxf <(printf '%s\n' $names) || true)
if [ -n "$dups" ]; then
	echo "wallclock-tests.sh: wall-clock tests whose names other tests in their packages share (rename one): $dups" >&2
	exit 1
fi

export WASMCP_TEST_CACHE="${WASMCP_TEST_CACHE:-$PWD/.cache/wazero-test}"
pattern="^($(printf '%s\n' $names | sort -u | paste -sd '|'))\$"
(set -x; go test -race -timeout 20m -run "$pattern" $(printf './%s ' $dirs))
