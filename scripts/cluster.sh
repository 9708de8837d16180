#!/usr/bin/env bash
# The cluster harness: a real redis-server and a real nginx (round robin,
# no sticky sessions) on loopback ports of their own, with three wasmcp
# replicas of examples/conformance/wasmcp.toml plus a [cluster] table
# behind it, all started by the Go test TestCluster (cmd/wasmcp, build tag
# cluster) and stopped when it ends, failed or not. It checks, in order:
#   - the conformance suite's 2026-07-28 and 2025-11-25 legs pass through
#     nginx, and so do its other three (0.1.16, both scorecards)
#   - kv written through one replica is read through the others
#   - a listen stream on replica 1 gets notifications caused on 2 and 3
#   - an input_required call begun on replica 1 is finished on replica 2
#     (sealed requestState); replica 3 refuses it tampered with
#   - a task started on replica 1 is seen by tasks/get on replicas 2 and 3,
#     and its notifications/tasks reach a listen stream on replica 2
#   - a legacy session's calls succeed on whichever replica gets them, and
#     its notification reaches the replica holding its GET stream, and a
#     DELETE on one replica ends it on the others
#   - SIGKILL of a replica under bounded load loses at most the calls in
#     flight on it, and the legacy session goes on
#   - Redis stopped: clear kv errors, /readyz 503; restarted: healed, and
#     what Redis acknowledged before the stop is still there
#
#   scripts/cluster.sh        (scripts/test.sh runs it, except with --quick)
#
# Needs redis-server and nginx (scripts/install-deps.sh), Node 22 and the
# conformance referees (scripts/conformance.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in redis-server nginx; do
	command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
		{ echo "cluster: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
export WASMCP_TEST_CACHE="${WASMCP_TEST_CACHE:-$PWD/.cache/wazero-test}"
go vet -tags cluster ./cmd/wasmcp
go test -race -tags cluster -count=1 -timeout 8m -run '^TestCluster$' -v ./cmd/wasmcp
