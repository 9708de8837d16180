;; refused_sig.wat: an Extism module importing what the host refuses (extism:host/env.alloc with the wrong signature).
(module
  (import "extism:host/env" "alloc" (func (param i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "call") (result i32) (i32.const 0)))
