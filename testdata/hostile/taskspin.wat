;; taskspin.wat: a tool that may run as a task (execution.taskSupport
;; optional) and never ends on its own: a tight loop with no calls, which
;; only the host's interrupt (tasks/cancel, the task deadline) stops.
;;
;;   spin   a tight loop
;;   alive  answers "alive" (any other tool name)
(module
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (memory (export "memory") 3)

  (data (i32.const 0) "{\"abi\":1,\"name\":\"taskspin\",\"tools\":[{\"name\":\"spin\",\"inputSchema\":{\"type\":\"object\"},\"execution\":{\"taskSupport\":\"optional\"}},{\"name\":\"alive\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 4096) "{\"content\":[{\"type\":\"text\",\"text\":\"alive\"}]}\00")

  (func $strlen (param $p i32) (result i32)
    (local $q i32)
    (local.set $q (local.get $p))
    (block $done
      (loop $l
        (br_if $done (i32.eqz (i32.load8_u (local.get $q))))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $l)))
    (i32.sub (local.get $q) (local.get $p)))

  (func $out (param $p i32)
    (call $output_write (local.get $p) (call $strlen (local.get $p))))

  ;; $has_spin reports whether the envelope holds "name":"spin".
  (func $has_spin (param $n i32) (result i32)
    (local $i i32)
    (block $none
      (loop $l
        (br_if $none (i32.gt_u (i32.add (local.get $i) (i32.const 13)) (local.get $n)))
        (if (i32.and
              (i64.eq (i64.load (i32.add (i32.const 65536) (local.get $i))) (i64.const 0x223A22656D616E22)) ;; "name":"
              (i32.eq (i32.load (i32.add (i32.const 65544) (local.get $i))) (i32.const 0x6E697073)))        ;; spin
          (then (return (i32.const 1))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (i32.const 0))

  (func (export "wasmcp_call") (result i32)
    (local $n i32)
    (local.set $n (call $input_read (i32.const 65536) (i32.const 65536)))
    (if (i32.eq (i32.load8_u (i32.const 65547)) (i32.const 119)) ;; {"method":"wasmcp/describe"
      (then (call $out (i32.const 0)) (return (i32.const 0))))
    (if (call $has_spin (local.get $n))
      (then (loop $l (br $l))))
    (call $out (i32.const 4096))
    (i32.const 0)))
