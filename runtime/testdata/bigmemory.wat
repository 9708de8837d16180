;; bigmemory.wat: declares a 4 MiB minimum memory, for the limit check at
;; NewPool. Built by build.sh.
(module
  (memory (export "memory") 64)
  (func (export "wasmcp_call") (result i32) (i32.const 0)))
