;; hoard.wat: a tool that must run as a task (execution.taskSupport
;; required) and answers a result of almost 4 MiB (the default
;; max_output), so that a client starting many such tasks asks the server
;; to keep gigabytes of results for their ttl (the task byte budgets
;; refuse it; cmd/wasmcp TestMemoryBudgetsRSS).
;;
;;   big    a text block of 4,194,000 bytes of "x", as a task
;;   alive  answers "alive" (any other tool name)
(module
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (memory (export "memory") 68)

  (data (i32.const 0) "{\"abi\":1,\"name\":\"hoard\",\"tools\":[{\"name\":\"big\",\"inputSchema\":{\"type\":\"object\"},\"execution\":{\"taskSupport\":\"required\"}},{\"name\":\"alive\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 4096) "{\"content\":[{\"type\":\"text\",\"text\":\"alive\"}]}\00")
  (data (i32.const 8192) "{\"content\":[{\"type\":\"text\",\"text\":\"")
  (data (i32.const 8300) "\"}]}")

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

  ;; $has_big reports whether the envelope (n bytes at 65536) holds
  ;; "name":"big".
  (func $has_big (param $n i32) (result i32)
    (local $i i32)
    (block $none
      (loop $l
        (br_if $none (i32.gt_u (i32.add (local.get $i) (i32.const 12)) (local.get $n)))
        (if (i32.and
              (i64.eq (i64.load (i32.add (i32.const 65536) (local.get $i))) (i64.const 0x223A22656D616E22)) ;; "name":"
              (i32.eq (i32.load (i32.add (i32.const 65544) (local.get $i))) (i32.const 0x22676962)))        ;; big"
          (then (return (i32.const 1))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (i32.const 0))

  (func (export "wasmcp_call") (result i32)
    (local $n i32)
    (local.set $n (call $input_read (i32.const 65536) (i32.const 65536)))
    (if (i32.eq (i32.load8_u (i32.const 65547)) (i32.const 119)) ;; wasmcp/describe
      (then (call $out (i32.const 0)) (return (i32.const 0))))
    (if (call $has_big (local.get $n))
      (then
        ;; the text at 131072: 4,194,000 bytes of "x"
        (memory.fill (i32.const 131072) (i32.const 120) (i32.const 4194000))
        (call $output_write (i32.const 8192) (i32.const 35))
        (call $output_write (i32.const 131072) (i32.const 4194000))
        (call $output_write (i32.const 8300) (i32.const 4))
        (return (i32.const 0))))
    (call $out (i32.const 4096))
    (i32.const 0)))
