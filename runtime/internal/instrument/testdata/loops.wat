;; loops.wat: control flow (loops, nested blocks, br_table, multi-value
;; blocks and loops, if/else, recursion, call_indirect, select) and
;; imported globals, whose indices must not move. Immediates full of 0x03
;; bytes (the loop opcode) check that the decoder never mistakes one.
(module
  (import "env" "twice" (func $twice (param i32) (result i32)))
  (import "env" "g" (global $g i32))
  (import "env" "mg" (global $mg (mut i32)))
  (import "env" "g64" (global $g64 i64))
  (type $pair (func (param i32 i32) (result i32 i32)))
  (type $i2i (func (param i32) (result i32)))
  (memory (export "memory") 1)
  (global $counter (mut i32) (i32.const 0))
  (global $k i64 (i64.const 0x0303030303030303))
  (table 3 funcref)
  (elem (i32.const 0) $fib $sum $twice)

  ;; sum 1..n: the counting loop.
  (func $sum (export "sum") (param $n i32) (result i32)
    (local $acc i32)
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $acc (i32.add (local.get $acc) (local.get $n)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $l)))
    (local.get $acc))

  ;; nested loops with breaks to outer labels: count pairs i<j<n.
  (func (export "pairs") (param $n i32) (result i32)
    (local $i i32) (local $j i32) (local $c i32)
    (block $out
      (loop $li
        (br_if $out (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $j (i32.add (local.get $i) (i32.const 1)))
        (block $next
          (loop $lj
            (br_if $next (i32.ge_u (local.get $j) (local.get $n)))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $lj)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $li)))
    (local.get $c))

  ;; br_table inside a loop: a tiny state machine over the bits of x.
  (func (export "states") (param $x i32) (result i32)
    (local $s i32) (local $steps i32)
    (loop $run
      (local.set $steps (i32.add (local.get $steps) (i32.const 1)))
      (block $b3 (block $b2 (block $b1 (block $b0
        (br_table $b0 $b1 $b2 $b3 (i32.and (local.get $x) (i32.const 3))))
        ;; b0
        (local.set $s (i32.add (local.get $s) (i32.const 3))) (br $b3))
        ;; b1
        (local.set $s (i32.mul (local.get $s) (i32.const 3))) (br $b3))
        ;; b2
        (local.set $s (i32.xor (local.get $s) (i32.const 0x0303))))
      (local.set $x (i32.shr_u (local.get $x) (i32.const 2)))
      (br_if $run (i32.ne (local.get $x) (i32.const 0))))
    (i32.add (i32.mul (local.get $s) (i32.const 100)) (local.get $steps)))

  ;; multi-value: a block and a loop with parameters and two results.
  (func (export "swapsum") (param i32 i32) (result i32 i32)
    (local.get 0) (local.get 1)
    (block (type $pair) (param i32 i32) (result i32 i32)
      (local.set 0) (local.set 1) (local.get 0) (local.get 1))
    (loop $l (param i32 i32) (result i32 i32)
      (local.set 1) (local.set 0)
      (local.get 0) (i32.add (local.get 1) (i32.const 3))
      (br_if $l (i32.lt_u (local.get 1) (i32.const 20)))))

  ;; if/else with results and a typed select.
  (func (export "pick") (param i32) (result i32)
    (if (result i32) (local.get 0)
      (then (select (result i32) (i32.const 3) (i32.const 0x303) (i32.gt_s (local.get 0) (i32.const 3))))
      (else (i32.const -3))))

  ;; recursion and call_indirect (through the table: fib, sum, imported twice).
  (func $fib (export "fib") (param $n i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (local.get $n))
      (else (i32.add (call $fib (i32.sub (local.get $n) (i32.const 1)))
                     (call $fib (i32.sub (local.get $n) (i32.const 2)))))))
  (func (export "indirect") (param $f i32) (param $x i32) (result i32)
    (call_indirect (type $i2i) (local.get $x) (local.get $f)))

  ;; globals: imported, imported mutable, defined; the counter survives calls.
  (func (export "globals") (result i64)
    (global.set $counter (i32.add (global.get $counter) (i32.const 1)))
    (global.set $mg (i32.add (global.get $mg) (global.get $g)))
    (i64.add
      (i64.add (global.get $k) (global.get $g64))
      (i64.extend_i32_u (i32.add (global.get $mg) (i32.mul (global.get $counter) (i32.const 1000))))))

  ;; memory with memargs of offset 3 and align 3 (0x03 bytes), a loop in
  ;; unreachable code, and constants made of 0x03 bytes.
  (func (export "mem") (param $n i32) (result i64)
    (local $i i32)
    (loop $l
      (i64.store offset=3 align=8 (i32.shl (local.get $i) (i32.const 3)) (i64.extend_i32_u (local.get $i)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (block $b
      (br $b)
      (loop $dead (br $dead)))
    (i64.add
      (i64.add (i64.load offset=3 (i32.const 8)) (i64.const 0x0303030303030303))
      (i64.add (i64.reinterpret_f64 (f64.const 0x1.0303030303030p+3)) (i64.extend_i32_u (i32.reinterpret_f32 (f32.const 0x1.030306p+3)))))))
