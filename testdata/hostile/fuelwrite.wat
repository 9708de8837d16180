;; wat2wasm: --no-check
;; fuelwrite.wat: refers to global indices past its own globals, which are
;; where the host's instrumentation puts its interrupt flag (index 0 here)
;; and its fuel (index 1). Its loop stores 2^31-1 into the fuel on every
;; iteration, so that, were it loaded, it would never exit to Go nor see
;; the flag: an uninterruptible loop that freezes the garbage collector.
;; It is invalid WebAssembly (wat2wasm builds it with --no-check) and the
;; host must refuse it at load.
(module
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"abi\":1,\"name\":\"fuelwrite\",\"tools\":[{\"name\":\"spin\"}]}")
  (func (export "wasmcp_call") (result i32)
    (drop (call $input_read (i32.const 1024) (i32.const 1024)))
    (if (i32.eq (i32.load8_u (i32.const 1035)) (i32.const 119)) ;; describe
      (then (call $output_write (i32.const 0) (i32.const 54))
            (return (i32.const 0))))
    (loop $l
      (global.set 1 (i32.const 0x7fffffff)) ;; the fuel
      (br $l))
    (i32.const 0)))
