;; bulkbench.wat: loops around bulk instructions, for BenchmarkBulk (which
;; measures their throughput to choose MemoryShift and TableShift).
(module
  (memory (export "memory") 256) ;; 16 MiB
  (table $t 1048576 funcref)
  (func (export "fill") (param $n i32) (param $len i32)
    (loop $l
      (memory.fill (i32.const 0) (i32.const 1) (local.get $len))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "copy") (param $n i32) (param $len i32)
    (loop $l
      (memory.copy (i32.const 0) (i32.const 8388608) (local.get $len))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "table_fill") (param $n i32) (param $len i32)
    (loop $l
      (table.fill $t (i32.const 0) (ref.null func) (local.get $len))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "table_copy") (param $n i32) (param $len i32)
    (loop $l
      (table.copy $t $t (i32.const 0) (i32.const 524288) (local.get $len))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))))
