;; stack.wat: call graphs for the stack budget (see stack.go). Each export
;; takes a depth n and returns n (or traps once the budget runs out); the
;; global $last is the n of the last frame entered (n - $last frames deep).
(module
  (type $i2i (func (param i32) (result i32)))
  (memory (export "memory") 1)
  (global $last (export "last") (mut i32) (i32.const 0))
  (table 2 funcref)
  (elem (i32.const 0) $viatable $leaf)

  (func $note (param $n i32) (global.set $last (local.get $n)))

  ;; self: direct self-recursion (charged).
  (func $self (export "self") (param $n i32) (result i32)
    (call $note (local.get $n))
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (call $self (i32.sub (local.get $n) (i32.const 1))) (i32.const 1)))))

  ;; even/odd: mutual recursion (both calls charged).
  (func $even (export "even") (param $n i32) (result i32)
    (call $note (local.get $n))
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (call $odd (i32.sub (local.get $n) (i32.const 1))) (i32.const 1)))))
  (func $odd (param $n i32) (result i32)
    (call $note (local.get $n))
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (call $even (i32.sub (local.get $n) (i32.const 1))) (i32.const 1)))))

  ;; viatable: recursion through call_indirect and a helper (the indirect
  ;; call is charged, the direct one to the helper is not).
  (func $viatable (export "viatable") (param $n i32) (result i32)
    (call $note (local.get $n))
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (call $helper (i32.sub (local.get $n) (i32.const 1))) (i32.const 1)))))
  (func $helper (param $n i32) (result i32)
    (call_indirect (type $i2i) (local.get $n) (i32.const 0)))

  ;; chain: a loop calling a leaf through a chain of non-recursive calls
  ;; (nothing charged), n times.
  (func $leaf (param $n i32) (result i32) (local.get $n))
  (func $mid (param $n i32) (result i32) (call $leaf (local.get $n)))
  (func (export "chain") (param $n i32) (result i32)
    (local $i i32)
    (loop $l
      (drop (call $mid (local.get $i)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (call $note (local.get $n))
    (local.get $n))
)
