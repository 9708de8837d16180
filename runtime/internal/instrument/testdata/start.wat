;; start.wat: a start section, which the rewriter turns into an export.
(module
  (memory 1)
  (global $ran (mut i32) (i32.const 0))
  (func $init (loop $l (global.set $ran (i32.add (global.get $ran) (i32.const 1)))
                       (br_if $l (i32.lt_u (global.get $ran) (i32.const 5)))))
  (start $init)
  (func (export "ran") (result i32) (global.get $ran)))
