;; startloop.wat: a reactor whose start section loops forever; the runtime
;; must stop it at the call's deadline (instrumentation turns the start
;; section into an export the pool calls itself).
(module
  (memory (export "memory") 1)
  (func $forever (loop $l (br $l)))
  (start $forever)
  (func (export "wasmcp_call") (result i32) (i32.const 0)))
