#!/usr/bin/env bash
# Prints the share of a CPU profile's samples in each part of wasmcp's call
# path (shares overlap: a frame can be in several categories, and
# "encoding/json (anywhere)" includes the JSON lines above it):
#
#   bench/profcat.sh BINARY PROFILE
#
# Wasm guest code has no Go symbols: pprof shows it as runtime._ExternalCode
# (under runtime._System, not under the caller's stack).
set -euo pipefail
bin=$1 prof=$2
total=$(go tool pprof -top "$bin" "$prof" 2>/dev/null | sed -n 's/.*Total samples = \([0-9.]*m\?s\).*/\1/p')
echo "total samples: $total"
while IFS='|' read -r label re; do
	line=$(go tool pprof -top -focus="$re" "$bin" "$prof" 2>/dev/null | grep -m1 "Showing nodes accounting for" || true)
	pct=$(echo "$line" | sed -n 's/.*accounting for [0-9.]*m\?s, \([0-9.]*%\) of.*/\1/p')
	printf '  %-62s %6s\n' "$label" "${pct:-0%}"
done <<'CATS'
wasm guest code (JIT; runtime._ExternalCode)|^runtime\._ExternalCode$
wazero call machinery + interrupt exits (callEngine, FailIfClosed)|wazevo\.\(\*callEngine\)|wasm\.\(\*ModuleInstance\)\.FailIfClosed|CloseModuleOnCanceledOrTimeout
runtime.(*Pool).Call (all of it except guest code)|wasmcp/runtime\.\(\*Pool\)\.Call
per-call deadline timer (context.WithTimeout and its cancel)|^context\.WithTimeout$|^context\.\(\*timerCtx\)\.cancel$
plugins: tools/call params parse (parseParams)|wasmcp/plugins\.parseParams
plugins: inputSchema validation (internal/schema)|wasmcp/internal/schema\.\(\*Schema\)\.Validate
plugins: envelope build (buildEnvelope)|wasmcp/plugins\.buildEnvelope
encoding/json (anywhere)|^encoding/json\.
goroutine stack growth (runtime.newstack)|^runtime\.newstack$
allocation (runtime.mallocgc)|^runtime\.mallocgc$
GC (background mark worker + assists)|^runtime\.gcBgMarkWorker$|^runtime\.gcAssistAlloc$
stdio: read and split lines (internal/mcp readLoop)|wasmcp/internal/mcp\.\(\*stdioConn\)\.readLoop
stdio: write responses (internal/mcp lineWriter)|wasmcp/internal/mcp\.\(\*lineWriter\)
HTTP: wasmcp handler (internal/mcp httpHandler.ServeHTTP)|wasmcp/internal/mcp\.\(\*httpHandler\)\.ServeHTTP
HTTP: net/http server (conn.serve)|^net/http\.\(\*conn\)\.serve$
syscalls|^syscall\.Syscall|^syscall\.RawSyscall|^internal/runtime/syscall/linux\.Syscall6$
load generator, in process (loadgen + net/http client)|bench/internal/loadgen|^net/http\.\(\*persistConn\)|^net/http\.\(\*Transport\)
CATS
