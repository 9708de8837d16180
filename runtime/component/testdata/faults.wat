;; A component of two core instances, each with its own memory, for the
;; runtime's limits: echo (a string round trip, what a call that works
;; looks like), spin (never returns: a loop in the second core instance,
;; reached through the third), hog (grows memory $a until refused,
;; then traps, as C's abort after a malloc that failed), trap (unreachable), grow-a and grow-b (memory.grow on either memory,
;; returning what it returned), and a core module without a memory that
;; only forwards calls (as wit-component's shim modules do). Built by
;; build.sh.
(component
  (core module $a
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
    (func (export "hog") (result i32)
      (loop $l
        i32.const 1
        memory.grow
        i32.const -1
        i32.ne
        br_if $l)
      unreachable)
    (func (export "trap") unreachable)
    (func (export "grow") (param i32) (result i32)
      local.get 0
      memory.grow))
  (core module $b
    (memory (export "memory") 1)
    (func (export "spin") (loop $l br $l))
    (func (export "grow") (param i32) (result i32)
      local.get 0
      memory.grow))
  (core module $fwd
    (import "a" "spin" (func $spin))
    (func (export "spin") call $spin))
  (core instance $ia (instantiate $a))
  (core instance $ib (instantiate $b))
  (core instance $if (instantiate $fwd (with "a" (instance $ib))))
  (alias core export $ia "memory" (core memory $mem))
  (alias core export $ia "cabi_realloc" (core func $realloc))
  (func $echo (param "s" string) (result string)
    (canon lift (core func $ia "echo") (memory $mem) (realloc $realloc) string-encoding=utf8))
  (func $spin (canon lift (core func $if "spin")))
  (func $hog (result u32) (canon lift (core func $ia "hog")))
  (func $trap (canon lift (core func $ia "trap")))
  (func $grow-a (param "pages" u32) (result s32) (canon lift (core func $ia "grow")))
  (func $grow-b (param "pages" u32) (result s32) (canon lift (core func $ib "grow")))
  (export "echo" (func $echo))
  (export "spin" (func $spin))
  (export "hog" (func $hog))
  (export "trap" (func $trap))
  (export "grow-a" (func $grow-a))
  (export "grow-b" (func $grow-b))
)
