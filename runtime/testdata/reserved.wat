;; reserved.wat: a reactor exporting a global under the name the runtime
;; reserves for its interrupt flag, so it cannot be instrumented and runs on
;; the fallback runtime (CloseOnContextDone). Input "l" loops forever,
;; anything else is echoed.
(module
  (import "wasmcp" "input_len" (func $input_len (result i32)))
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (memory (export "memory") 1)
  (global (export "__wasmcp_interrupt") (mut i32) (i32.const 0))
  (func (export "wasmcp_call") (result i32)
    (local $n i32)
    (local.set $n (call $input_len))
    (if (i32.gt_u (local.get $n) (i32.const 1024)) (then (return (i32.const 2))))
    (drop (call $input_read (i32.const 0) (local.get $n)))
    (if (i32.eq (i32.load8_u (i32.const 0)) (i32.const 108)) ;; l
      (then (loop $l (br $l))))
    (call $output_write (i32.const 0) (local.get $n))
    (i32.const 0)))
