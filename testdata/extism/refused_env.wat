;; refused_env.wat: an Extism module importing what the host refuses (extism:host/env.memory_bytes).
(module
  (import "extism:host/env" "memory_bytes" (func (result i64)))
  (memory (export "memory") 1)
  (func (export "call") (result i32) (i32.const 0)))
