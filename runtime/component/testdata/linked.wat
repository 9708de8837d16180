;; A component whose core modules are linked through an instance's
;; exports and an inline export bag, calling lowered host functions
;; (strings both ways, numbers, an imported resource it drops) and using
;; a resource it defines (new, rep, drop with a destructor). Exports
;; functions at world level and in an interface. Built by build.sh.
(component
  (import "test:rt/host@0.2.3" (instance $host
    (export "thing" (type $t (sub resource)))
    (export "greet" (func (param "name" string) (result string)))
    (export "add" (func (param "a" u32) (param "b" u32) (result u32)))
    (export "make" (func (param "n" u32) (result (own $t))))
  ))
  (alias export $host "thing" (type $thing))

  ;; The allocator, the memory and the destructor of $r live in their
  ;; own module, instantiated first.
  (core module $memmod
    (memory (export "memory") 1)
    (global $drops (mut i32) (i32.const 0))
    (func (export "dtor") (param i32)
      global.get $drops
      local.get 0
      i32.add
      global.set $drops)
    (func (export "drops") (result i32)
      global.get $drops)
    (global $bump (mut i32) (i32.const 1024))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      ;; align the bump pointer up
      global.get $bump
      local.get 2
      i32.add
      i32.const 1
      i32.sub
      i32.const 0
      local.get 2
      i32.sub
      i32.and
      local.tee $p
      local.get 3
      i32.add
      global.set $bump
      local.get $p))
  (core instance $m (instantiate $memmod))
  (alias core export $m "memory" (core memory $memory))
  (alias core export $m "realloc" (core func $realloc))
  (alias core export $m "dtor" (core func $dtor))
  (type $r (resource (rep i32) (dtor (core func $dtor))))

  (alias export $host "greet" (func $greet))
  (alias export $host "add" (func $add))
  (alias export $host "make" (func $make))
  (core func $greet-low (canon lower (func $greet) (memory $memory) (realloc $realloc)))
  (core func $add-low (canon lower (func $add)))
  (core func $make-low (canon lower (func $make)))
  (core func $thing-drop (canon resource.drop $thing))
  (core func $r-new (canon resource.new $r))
  (core func $r-rep (canon resource.rep $r))
  (core func $r-drop (canon resource.drop $r))

  (core module $main
    (import "host" "greet" (func $greet (param i32 i32 i32)))
    (import "host" "add" (func $add (param i32 i32) (result i32)))
    (import "host" "make" (func $make (param i32) (result i32)))
    (import "host" "drop-thing" (func $drop-thing (param i32)))
    (import "host" "r-new" (func $r-new (param i32) (result i32)))
    (import "host" "r-rep" (func $r-rep (param i32) (result i32)))
    (import "host" "r-drop" (func $r-drop (param i32)))
    (import "env" "memory" (memory 1))
    ;; hello(s) = greet(s): the host writes the (ptr, len) pair at 16.
    (func (export "hello") (param i32 i32) (result i32)
      local.get 0
      local.get 1
      i32.const 16
      call $greet
      i32.const 16)
    (func (export "sum") (param i32 i32) (result i32)
      local.get 0
      local.get 1
      call $add)
    ;; things(n) makes a host thing and drops it, n times; returns n.
    (func (export "things") (param $n i32) (result i32)
      (local $i i32)
      (block $done
        (loop $next
          local.get $i
          local.get $n
          i32.ge_u
          br_if $done
          local.get $i
          call $make
          call $drop-thing
          local.get $i
          i32.const 1
          i32.add
          local.set $i
          br $next))
      local.get $n)
    ;; own-rep(x) = rep(new(x)), then drops the handle (running the dtor).
    (func (export "own-rep") (param i32) (result i32)
      (local $h i32)
      (local $rep i32)
      local.get 0
      call $r-new
      local.tee $h
      call $r-rep
      local.set $rep
      local.get $h
      call $r-drop
      local.get $rep)
    ;; bad-drop drops a handle that does not exist: a trap.
    (func (export "bad-drop") (result i32)
      i32.const 99
      call $r-drop
      i32.const 0))
  (core instance $i (instantiate $main
    (with "host" (instance
      (export "greet" (func $greet-low))
      (export "add" (func $add-low))
      (export "make" (func $make-low))
      (export "drop-thing" (func $thing-drop))
      (export "r-new" (func $r-new))
      (export "r-rep" (func $r-rep))
      (export "r-drop" (func $r-drop))))
    (with "env" (instance $m))))

  (func $hello (param "name" string) (result string)
    (canon lift (core func $i "hello") (memory $memory) (realloc $realloc)))
  (func $sum (param "a" u32) (param "b" u32) (result u32)
    (canon lift (core func $i "sum")))
  (func $things (param "n" u32) (result u32)
    (canon lift (core func $i "things")))
  (func $own-rep (param "x" u32) (result u32)
    (canon lift (core func $i "own-rep")))
  (func $drops (result u32)
    (canon lift (core func $m "drops")))
  (func $bad-drop (result u32)
    (canon lift (core func $i "bad-drop")))
  (export "hello" (func $hello))
  (export "sum" (func $sum))
  (instance $api
    (export "things" (func $things))
    (export "own-rep" (func $own-rep))
    (export "drops" (func $drops))
    (export "bad-drop" (func $bad-drop)))
  (export "test:rt/api@0.1.0" (instance $api))
)
