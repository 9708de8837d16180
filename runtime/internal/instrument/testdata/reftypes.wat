;; reftypes.wat: reference types (ref.null, ref.is_null, ref.func,
;; table.get/set on funcref and externref tables, typed select, reference
;; locals and parameters).
(module
  (memory 1)
  (type $v2i (func (result i32)))
  (table $f 2 funcref)
  (table $x 2 externref)
  (func $three (result i32) (i32.const 3))
  (elem declare func $three)
  (func (export "refs") (param $e externref) (result i32)
    (local $r funcref) (local $n i32)
    (table.set $x (i32.const 1) (local.get $e))
    (local.set $r (ref.func $three))
    (table.set $f (i32.const 0) (local.get $r))
    (loop $l
      (local.set $n (i32.add (local.get $n)
        (call_indirect $f (type $v2i) (i32.const 0))))
      (br_if $l (i32.lt_u (local.get $n) (i32.const 30))))
    (i32.add (local.get $n)
      (i32.add
        (i32.mul (ref.is_null (table.get $x (i32.const 1))) (i32.const 100))
        (i32.mul (ref.is_null (select (result funcref) (ref.null func) (table.get $f (i32.const 0)) (i32.const 1))) (i32.const 1000))))))
