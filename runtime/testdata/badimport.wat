;; badimport.wat: imports what the host must refuse (a socket call, a foreign
;; module, an unknown wasmcp function, an imported memory). Built by build.sh.
(module
  (import "wasi_snapshot_preview1" "sock_accept" (func (param i32 i32 i32) (result i32)))
  (import "env" "system" (func (param i32) (result i32)))
  (import "wasmcp" "http_fetch" (func (param i32 i32) (result i32)))
  (import "wasmcp" "log" (func (param i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
  (import "env" "memory" (memory 1))
  (export "memory" (memory 0))
  (func (export "wasmcp_call") (result i32) (i32.const 0)))
