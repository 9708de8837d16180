;; nomemory.wat: exports wasmcp_call but no memory. Built by build.sh.
(module
  (func (export "wasmcp_call") (result i32) (i32.const 0)))
