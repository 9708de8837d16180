#!/usr/bin/env bash
# Installs the toolchains the tests and example builds need, if missing:
# Debian packages (clang, lld, wasi-libc, wabt, binaryen, rustc with the
# wasm32 standard library, redis-server and nginx for the cluster harness
# scripts/cluster.sh, chromium for the MCP Apps browser test
# scripts/apps-browser.sh). npm packages and Node 22 are installed by the
# scripts that use them, into .cache/. The tests use no service a package
# may start: they run their own redis-server and nginx on loopback ports.
set -euo pipefail
need=()
command -v clang >/dev/null || need+=(clang)
command -v wasm-ld >/dev/null || need+=(lld)
[ -e /usr/include/wasm32-wasi/stdio.h ] || need+=(wasi-libc)
ls /usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a >/dev/null 2>&1 || need+=(libclang-rt-14-dev-wasm32)
command -v wat2wasm >/dev/null || need+=(wabt)
command -v wasm-opt >/dev/null || need+=(binaryen)
[ -x /usr/bin/rustc ] || need+=(rustc)
[ -d /usr/lib/rustlib/wasm32-wasi ] || need+=(libstd-rust-dev-wasm32)
command -v node >/dev/null || need+=(nodejs npm)
command -v redis-server >/dev/null || need+=(redis-server)
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null || need+=(nginx)
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
	echo "installing: ${need[*]}"
	sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
