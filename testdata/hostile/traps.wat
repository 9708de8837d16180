;; traps.wat: every kind of wasm trap, one tool each. The tool is chosen by
;; the first letter of its name (found after "name":" in the envelope).
;;
;;   unreachable   u  the unreachable instruction (C abort, Rust panic=abort)
;;   div_zero      d  i32.div_u by zero
;;   overflow      o  i32.div_s INT_MIN / -1
;;   convert       c  i32.trunc_f32_s of NaN
;;   memory_oob    m  i32.load past the end of memory
;;   null_call     n  call_indirect through a null table entry
;;   sig_mismatch  s  call_indirect with the wrong signature
;;   table_oob     t  call_indirect past the end of the table
;;   recurse       r  unbounded recursion: wasm stack overflow
;;   alive         a  no trap: answers "alive" (the instance is healthy)
(module
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (memory (export "memory") 3)
  (type $i2i (func (param i32) (result i32)))
  (type $void (func))
  (table 2 funcref)
  (elem (i32.const 1) $id)

  (data (i32.const 0) "{\"abi\":1,\"name\":\"traps\",\"tools\":[{\"name\":\"unreachable\"},{\"name\":\"div_zero\"},{\"name\":\"overflow\"},{\"name\":\"convert\"},{\"name\":\"memory_oob\"},{\"name\":\"null_call\"},{\"name\":\"sig_mismatch\"},{\"name\":\"table_oob\"},{\"name\":\"recurse\"},{\"name\":\"alive\"}]}\00")
  (data (i32.const 4096) "{\"content\":[{\"type\":\"text\",\"text\":\"alive\"}]}\00")
  (data (i32.const 4200) "{\"content\":[{\"type\":\"text\",\"text\":\"no trap\"}]}\00")

  (func $id (param i32) (result i32) (local.get 0))

  (func $strlen (param $p i32) (result i32)
    (local $q i32)
    (local.set $q (local.get $p))
    (block $done
      (loop $l
        (br_if $done (i32.eqz (i32.load8_u (local.get $q))))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $l)))
    (i32.sub (local.get $q) (local.get $p)))

  (func $out (param $p i32)
    (call $output_write (local.get $p) (call $strlen (local.get $p))))

  ;; tool returns the first byte of the tool name in the envelope at 65536
  ;; (n bytes long), or 0.
  (func $tool (param $n i32) (result i32)
    (local $i i32)
    (block $none
      (loop $l
        (br_if $none (i32.gt_u (i32.add (local.get $i) (i32.const 9)) (local.get $n)))
        (if (i64.eq (i64.load (i32.add (i32.const 65536) (local.get $i))) (i64.const 0x223A22656D616E22))
          (then (return (i32.load8_u (i32.add (i32.const 65544) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (i32.const 0))

  (func $rec (param i32) (result i32)
    (i32.add (call $rec (i32.add (local.get 0) (i32.const 1))) (i32.const 1)))

  (func (export "wasmcp_call") (result i32)
    (local $n i32) (local $t i32)
    (local.set $n (call $input_read (i32.const 65536) (i32.const 65536)))
    (if (i32.eq (i32.load8_u (i32.const 65547)) (i32.const 119)) ;; {"method":"w...
      (then (call $out (i32.const 0)) (return (i32.const 0))))
    (local.set $t (call $tool (local.get $n)))
    (if (i32.eq (local.get $t) (i32.const 117)) (then unreachable)) ;; u
    (if (i32.eq (local.get $t) (i32.const 100)) ;; d
      (then (drop (i32.div_u (i32.const 1) (i32.load (i32.const 60000))))))
    (if (i32.eq (local.get $t) (i32.const 111)) ;; o
      (then (drop (i32.div_s (i32.const 0x80000000) (i32.sub (i32.load (i32.const 60000)) (i32.const 1))))))
    (if (i32.eq (local.get $t) (i32.const 99)) ;; c
      (then (drop (i32.trunc_f32_s (f32.div (f32.const 0) (f32.load (i32.const 60000)))))))
    (if (i32.eq (local.get $t) (i32.const 109)) ;; m
      (then (drop (i32.load (i32.const 0xFFFFFFF0)))))
    (if (i32.eq (local.get $t) (i32.const 110)) ;; n
      (then (drop (call_indirect (type $i2i) (i32.const 7) (i32.load (i32.const 60000))))))
    (if (i32.eq (local.get $t) (i32.const 115)) ;; s
      (then (call_indirect (type $void) (i32.const 1))))
    (if (i32.eq (local.get $t) (i32.const 116)) ;; t
      (then (drop (call_indirect (type $i2i) (i32.const 7) (i32.const 99)))))
    (if (i32.eq (local.get $t) (i32.const 114)) ;; r
      (then (drop (call $rec (i32.const 0)))))
    (if (i32.eq (local.get $t) (i32.const 97)) ;; a
      (then (call $out (i32.const 4096)) (return (i32.const 0))))
    (call $out (i32.const 4200))
    (i32.const 0)))
