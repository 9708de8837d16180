#!/bin/sh
# build.sh rebuilds the rewriter's WAT fixtures (needs wat2wasm from wabt).
set -eu
cd "$(dirname "$0")"
for f in *.wat; do
	wat2wasm --debug-names "$f" -o "${f%.wat}.wasm"
done
