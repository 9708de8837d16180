;; badutf8.wat: a describe answer with invalid UTF-8 (the byte FF in a
;; tool's description), next to a tool that is fine. The host refuses the
;; manifest at load, naming the plugin and the item (tools[1], "bad").
;;
;;   fine   answers "fine"
;;   bad    answers "bad" (its description holds the byte FF)
(module
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (memory (export "memory") 2)

  (data (i32.const 0) "{\"abi\":1,\"name\":\"badutf8\",\"tools\":[{\"name\":\"fine\"},{\"name\":\"bad\",\"description\":\"caf\ff\"}]}\00")
  (data (i32.const 1024) "{\"content\":[{\"type\":\"text\",\"text\":\"called\"}]}\00")

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

  (func (export "wasmcp_call") (result i32)
    (drop (call $input_read (i32.const 65536) (i32.const 65536)))
    (if (i32.eq (i32.load8_u (i32.const 65547)) (i32.const 119)) ;; wasmcp/describe
      (then (call $out (i32.const 0)) (return (i32.const 0))))
    (call $out (i32.const 1024))
    (i32.const 0)))
