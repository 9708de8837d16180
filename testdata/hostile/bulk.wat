;; bulk.wat: a loop of a few bytes around memory.fill of 64 MiB. Charged
;; by code size alone, thousands of fills (hundreds of GB) would run
;; between two checks of the deadline, all in native code that the Go
;; runtime cannot preempt, stalling every stop-the-world phase (and with
;; it every other call) as long.
;;
;;   fill  f  memory.fill of the whole memory, forever
(module
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (memory (export "memory") 1024) ;; 64 MiB
  (data (i32.const 0) "{\"abi\":1,\"name\":\"bulk\",\"tools\":[{\"name\":\"fill\"}]}")
  (func (export "wasmcp_call") (result i32)
    (drop (call $input_read (i32.const 1024) (i32.const 1024)))
    (if (i32.eq (i32.load8_u (i32.const 1035)) (i32.const 119)) ;; describe
      (then (call $output_write (i32.const 0) (i32.const 49))
            (return (i32.const 0))))
    (loop $l
      (memory.fill (i32.const 0) (i32.const 0) (i32.const 67108864))
      (br $l))
    (i32.const 0)))
