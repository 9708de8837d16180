;; wat-ping: the smallest wasmcp plugin, written by hand against the raw
;; ABI (no SDK, no libc, no WASI). Tool: ping -> "pong".
;;
;; It reads the request envelope, looks for the method name, and writes a
;; constant answer: the manifest for wasmcp/describe, a CallToolResult for
;; tools/call, and a JSON-RPC -32601 error (status 1) for anything else.
;; Build: wat2wasm -o wat-ping.wasm ping.wat
(module
  (import "wasmcp" "input_len" (func $input_len (result i32)))
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))

  (memory (export "memory") 2)

  ;; constant answers and the method names searched for
  (data (i32.const 0) "{\"abi\":1,\"name\":\"wat-ping\",\"version\":\"1.0.0\",\"description\":\"The smallest wasmcp plugin: hand-written WebAssembly text\",\"tools\":[{\"name\":\"ping\",\"description\":\"Answers pong\",\"inputSchema\":{\"type\":\"object\",\"properties\":{}},\"annotations\":{\"readOnlyHint\":true,\"idempotentHint\":true}}]}")      ;; 280 bytes
  (data (i32.const 512) "{\"content\":[{\"type\":\"text\",\"text\":\"pong\"}]}")        ;; 43 bytes
  (data (i32.const 576) "{\"code\":-32601,\"message\":\"Method not found\"}")         ;; 44 bytes
  (data (i32.const 640) "\"wasmcp/describe\"")          ;; 17 bytes
  (data (i32.const 672) "\"tools/call\"")          ;; 12 bytes

  ;; The envelope is read to offset 1024; at most 64 KiB of it is kept.
  (global $in i32 (i32.const 1024))
  (global $max i32 (i32.const 65536))

  ;; $contains: does the envelope (length $n at $in) contain needle[0:$k]?
  (func $contains (param $needle i32) (param $k i32) (param $n i32) (result i32)
    (local $i i32) (local $j i32)
    (block $no
      (loop $outer
        (br_if $no (i32.gt_s (i32.add (local.get $i) (local.get $k)) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $mismatch
          (loop $inner
            (if (i32.eq (local.get $j) (local.get $k)) (then (return (i32.const 1))))
            (br_if $mismatch
              (i32.ne
                (i32.load8_u (i32.add (global.get $in) (i32.add (local.get $i) (local.get $j))))
                (i32.load8_u (i32.add (local.get $needle) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $inner)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $outer)))
    (i32.const 0))

  (func (export "wasmcp_call") (result i32)
    (local $n i32)
    (local.set $n (call $input_len))
    (if (i32.gt_u (local.get $n) (global.get $max)) (then (local.set $n (global.get $max))))
    (local.set $n (call $input_read (global.get $in) (local.get $n)))
    (if (call $contains (i32.const 640) (i32.const 17) (local.get $n))
      (then
        (call $output_write (i32.const 0) (i32.const 280))
        (return (i32.const 0))))
    (if (call $contains (i32.const 672) (i32.const 12) (local.get $n))
      (then
        (call $output_write (i32.const 512) (i32.const 43))
        (return (i32.const 0))))
    (call $output_write (i32.const 576) (i32.const 44))
    (i32.const 1)))
