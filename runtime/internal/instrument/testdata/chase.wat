;; chase.wat: a loop of dependent loads (each load's address is the value
;; the previous one read), for BenchmarkPeriod: the host lays a random
;; cycle of pointers over the 64 MiB memory, so that every load misses the
;; caches and the TLB, the slowest code per byte of the fuel's count (3
;; bytes a load). The loop body is over Budget, so each iteration charges
;; the fuel directly.
(module
  (memory (export "memory") 1024)
  (func (export "chase") (param $p i32) (param $n i32) (result i32)
    (loop $l
      (local.set $p
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load (i32.load 
        (local.get $p))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (local.get $p)))
