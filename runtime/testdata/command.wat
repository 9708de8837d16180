;; command.wat: a command-mode plugin (exports _start, not wasmcp_call).
;; It echoes the envelope read through input_* with output_write; an input
;; starting with "x<digit>" then exits with that code. Built by build.sh.
(module
  (import "wasmcp" "input_len" (func $input_len (result i32)))
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (local $n i32)
    (local.set $n (call $input_len))
    (if (i32.gt_u (local.get $n) (i32.const 65536)) (then unreachable))
    (drop (call $input_read (i32.const 0) (local.get $n)))
    (call $output_write (i32.const 0) (local.get $n))
    (if (i32.eq (i32.load8_u (i32.const 0)) (i32.const 120))
      (then (call $proc_exit (i32.sub (i32.load8_u (i32.const 1)) (i32.const 48)))))))
