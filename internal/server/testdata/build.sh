#!/usr/bin/env bash
# Rebuilds the test plugins of internal/server from their sources.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../../.. && pwd)
for d in */; do
	name=${d%/}
	(cd "$root" && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" \
		-o "internal/server/testdata/$name.wasm" "./internal/server/testdata/$name")
done
