#!/bin/sh
# build.sh rebuilds the runtime test fixtures from their sources. Run it from
# anywhere; it needs wat2wasm (apt-get install -y wabt) and the Go toolchain.
set -eu
cd "$(dirname "$0")"
for f in *.wat; do
	wat2wasm "$f" -o "${f%.wat}.wasm"
done
# Go fixtures are main packages without a go.mod: build them by path from the
# module root so they use its go.mod (standard library only).
root=$(cd ../.. && pwd)
(cd "$root" && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags=-s \
	-o runtime/testdata/goplugin/goplugin.wasm ./runtime/testdata/goplugin)
(cd "$root" && GOOS=wasip1 GOARCH=wasm go build -trimpath -ldflags=-s \
	-o runtime/testdata/gocommand/gocommand.wasm ./runtime/testdata/gocommand)
