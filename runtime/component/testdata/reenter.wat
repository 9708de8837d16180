;; A component whose realloc calls an import (forbidden while arguments
;; are lowered: the spec's may_leave) and whose export calls an import
;; the host implements by calling the export again (forbidden: may_enter).
;; Built by build.sh.
(component
  (import "ping" (func $ping))
  (core func $ping-low (canon lower (func $ping)))
  (core module $mem
    (import "host" "ping" (func $ping))
    (memory (export "memory") 1)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      call $ping
      i32.const 64)
    (func (export "len") (param i32 i32) (result i32)
      local.get 1)
    (func (export "call-ping")
      call $ping))
  (core instance $i (instantiate $mem
    (with "host" (instance (export "ping" (func $ping-low))))))
  (alias core export $i "memory" (core memory $memory))
  (alias core export $i "realloc" (core func $realloc))
  (func $len (param "s" string) (result u32)
    (canon lift (core func $i "len") (memory $memory) (realloc $realloc)))
  (func $call-ping (canon lift (core func $i "call-ping")))
  (export "len" (func $len))
  (export "call-ping" (func $call-ping))
)
