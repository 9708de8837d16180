#!/usr/bin/env bash
# The test command (README "Run the tests"): installs what the tests need on
# a fresh Debian machine, then runs every check CI runs.
#
#   scripts/test.sh           everything
#   scripts/test.sh --quick   Go tests only (no toolchain installs, no conformance)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1

step() { printf '\n==> %s\n' "$*"; }

if [ $quick = 0 ]; then
	step "toolchains"
	scripts/install-deps.sh
	# The toolchains are installed now: a test that finds one missing
	# fails instead of skipping.
	export WASMCP_REQUIRE_TOOLCHAINS=1
fi

step "gofmt"
bad=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$bad" ]; then echo "not gofmt-formatted:"; echo "$bad"; exit 1; fi

step "go vet"
go vet ./...

step "go test -race (the wall-clock tests skipped: the next step runs them)"
# One compilation cache for every test binary, so each guest compiles once.
export WASMCP_TEST_CACHE="${WASMCP_TEST_CACHE:-$PWD/.cache/wazero-test}"
WASMCP_WALLCLOCK=skip go test -race -timeout 20m ./...

step "wall-clock tests (assertions on elapsed real time: testutil.WallClock)"
scripts/wallclock-tests.sh

if [ -d interop ]; then
	step "interop (official Go SDK client)"
	(cd interop && go vet ./... && go test -race -timeout 10m ./...)
fi

if [ $quick = 0 ]; then
	for s in examples/build.sh scripts/build-sdk-examples.sh testdata/hostile/build.sh testdata/extism/build.sh testdata/components/build.sh bench/plugins/build.sh; do
		if [ -x "$s" ]; then
			step "$s --check"
			"$s" --check
		fi
	done
	step "the JavaScript components rebuilt from source (their WIT and tools compared)"
	scripts/check-js-components.sh
	step "container image (deploy/image: OCI tarball, non-root, static binary)"
	(cd deploy/image && go vet ./... && go test -race -timeout 10m ./...)
	step "HTTP+SSE with the TypeScript SDK v1 client"
	scripts/sse-client.sh
	if [ -x scripts/conformance.sh ]; then
		step "MCP conformance suite"
		scripts/conformance.sh
	fi
	step "MCP Apps in headless Chromium (ext-apps AppBridge host, go-dashboard)"
	scripts/apps-browser.sh
	step "cluster harness (redis-server, nginx, 3 replicas)"
	scripts/cluster.sh
fi
step "all tests passed"
