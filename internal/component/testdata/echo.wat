;; A component exporting echo: func(s: string) -> string and a record
;; function, importing a logger interface with a resource, for the
;; decoder tests. Built by build.sh.
(component
  (import "test:rt/host@0.2.3" (instance $host
    (export "handle" (type $h (sub resource)))
    (export "log" (func (param "msg" string)))
    (export "open" (func (param "name" string) (result (own $h))))
  ))
  (core module $m
    (memory (export "memory") 1)
    (global $bump (mut i32) (i32.const 1024))
    (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      global.get $bump
      local.set $p
      global.get $bump
      local.get 3
      i32.add
      global.set $bump
      local.get $p)
    (func (export "echo") (param i32 i32) (result i32)
      i32.const 16
      local.get 0
      i32.store
      i32.const 20
      local.get 1
      i32.store
      i32.const 16)
  )
  (core instance $i (instantiate $m))
  (alias core export $i "memory" (core memory $mem))
  (alias core export $i "cabi_realloc" (core func $realloc))
  (alias core export $i "echo" (core func $echo))
  (type $pt (record (field "x" u32) (field "y" (option string)) (field "z" (list (tuple s8 f64 char)))))
  (export $pte "point" (type $pt))
  (type $e (enum "a" "b"))
  (type $f (flags "r" "w"))
  (type $v (variant (case "none") (case "num" u64) (case "res" (result string (error string)))))
  (export $ee "e" (type $e))
  (export $fe "f" (type $f))
  (export $ve "v" (type $v))
  (func $echo-lifted (param "s" string) (result string)
    (canon lift (core func $echo) (memory $mem) (realloc $realloc) string-encoding=utf8))
  (export "echo" (func $echo-lifted))
  (alias export $host "log" (func $log))
  (core func $log-lowered (canon lower (func $log) (memory $mem) string-encoding=utf8))
)
