;; A component whose canonical functions do not match their core
;; functions: every use must fail with an error, never a panic. Built by
;; build.sh (wasm-tools' parser does not validate).
(component
  (core module $m
    (memory (export "memory") 1)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32) i32.const 64)
    (func (export "realloc2") (param i32 i32) (result i32) i32.const 0)
    (func (export "one") (param i32) (result i32) local.get 0)
    (func (export "take") (param i32 i32) (result i32) i32.const 0))
  (core instance $i (instantiate $m))
  (alias core export $i "memory" (core memory $memory))
  (alias core export $i "realloc" (core func $realloc))
  (alias core export $i "realloc2" (core func $realloc2))
  ;; string -> string lifted from a func(i32) -> i32
  (func $bad-type (param "s" string) (result string)
    (canon lift (core func $i "one") (memory $memory) (realloc $realloc)))
  ;; the realloc option has the wrong signature
  (func $bad-realloc (param "s" string) (result u32)
    (canon lift (core func $i "take") (memory $memory) (realloc $realloc2)))
  (export "bad-type" (func $bad-type))
  (export "bad-realloc" (func $bad-realloc))
)
