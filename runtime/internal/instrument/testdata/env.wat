;; env.wat: the "env" module the other fixtures import globals and a
;; function from.
(module
  (global (export "g") i32 (i32.const 7))
  (global (export "mg") (mut i32) (i32.const 3))
  (global (export "g64") i64 (i64.const -5))
  (func (export "twice") (param i32) (result i32) (i32.mul (local.get 0) (i32.const 2))))
