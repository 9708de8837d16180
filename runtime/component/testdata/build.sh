#!/usr/bin/env bash
# Builds this directory's component fixtures (NAME.wat -> NAME.wasm) with
# internal/component/testdata/build.sh; --check fails if one differs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
args=()
[ "${1:-}" = --check ] && args+=(--check)
exec "$here/../../../internal/component/testdata/build.sh" "${args[@]}" "$here"
