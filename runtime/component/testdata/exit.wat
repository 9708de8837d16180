;; A component that calls wasi:cli/exit: quit(fail) exits with status 1
;; when fail is set, else 0; ok answers 7 (a call that works). Built by
;; build.sh.
(component
  (import "wasi:cli/exit@0.2.0" (instance $exit
    (export "exit" (func (param "status" (result))))
  ))
  (alias export $exit "exit" (func $exit-fn))
  (core func $exit-low (canon lower (func $exit-fn)))
  (core module $m
    (import "wasi" "exit" (func $exit (param i32)))
    (memory (export "memory") 1)
    (func (export "quit") (param i32)
      local.get 0
      call $exit)
    (func (export "ok") (result i32) i32.const 7))
  (core instance $i (instantiate $m
    (with "wasi" (instance (export "exit" (func $exit-low))))))
  (func $quit (param "fail" bool) (canon lift (core func $i "quit")))
  (func $ok (result u32) (canon lift (core func $i "ok")))
  (export "quit" (func $quit))
  (export "ok" (func $ok))
)
