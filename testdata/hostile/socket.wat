;; socket.wat: imports the WASI socket functions to accept and read a
;; connection on a descriptor it was never given. The host provides no
;; sockets: loading must fail, naming each refused import.
(module
  (import "wasi_snapshot_preview1" "sock_accept" (func $sock_accept (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_recv" (func $sock_recv (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"name\":\"socket\",\"tools\":[{\"name\":\"accept\"}]}")
  (func (export "wasmcp_call") (result i32)
    (drop (call $sock_accept (i32.const 3) (i32.const 0) (i32.const 1024)))
    (drop (call $sock_recv (i32.const 3) (i32.const 2048) (i32.const 1) (i32.const 0) (i32.const 3000) (i32.const 3004)))
    (call $output_write (i32.const 0) (i32.const 53))
    (i32.const 0)))
