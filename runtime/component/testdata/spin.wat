;; A component whose export never returns, and one that grows its memory
;; without end: the deadline and the memory limit must stop them. Built by
;; build.sh.
(component
  (core module $m
    (memory (export "memory") 1)
    (func (export "spin") (loop $l br $l))
    (func (export "hog") (result i32)
      (loop $l
        i32.const 1
        memory.grow
        i32.const -1
        i32.ne
        br_if $l)
      memory.size))
  (core instance $i (instantiate $m))
  (func $spin (canon lift (core func $i "spin")))
  (func $hog (result u32) (canon lift (core func $i "hog")))
  (export "spin" (func $spin))
  (export "hog" (func $hog))
)
