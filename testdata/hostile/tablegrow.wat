;; tablegrow.wat: grows a funcref table, which lives outside linear memory
;; (and so outside the memory limit): 8 bytes or more of host memory per
;; entry, per instance. The host caps the entries of a module's tables
;; ([limits] max_table_elements); past the cap table.grow returns -1.
;;
;;   big   b  table.grow by 16M entries at once
;;   step  s  table.grow by 64Ki entries until it fails
(module
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (memory (export "memory") 1)
  (table $t 1 funcref)
  (data (i32.const 0) "{\"abi\":1,\"name\":\"tablegrow\",\"tools\":[{\"name\":\"big\"},{\"name\":\"step\"}]}")
  (data (i32.const 256) "{\"content\":[{\"type\":\"text\",\"text\":\"refused\"}]}")
  (data (i32.const 512) "{\"content\":[{\"type\":\"text\",\"text\":\"grew\"}]}")
  (data (i32.const 768) "{\"content\":[{\"type\":\"text\",\"text\":\"refused after growing\"}]}")
  (func $out (param $p i32) (param $n i32) (call $output_write (local.get $p) (local.get $n)))
  (func (export "wasmcp_call") (result i32)
    (local $n i32)
    (drop (call $input_read (i32.const 1024) (i32.const 1024)))
    (if (i32.eq (i32.load8_u (i32.const 1035)) (i32.const 119)) ;; describe
      (then (call $out (i32.const 0) (i32.const 69)) (return (i32.const 0))))
    ;; the tool name's first letter: after {"tool":{"name":" ... found by
    ;; scanning for the first 'b' or 's' after "name":"
    (if (i32.ne (call $letter) (i32.const 115))
      (then
        (if (i32.eq (table.grow $t (ref.null func) (i32.const 16777216)) (i32.const -1))
          (then (call $out (i32.const 256) (i32.const 46)))
          (else (call $out (i32.const 512) (i32.const 43))))
        (return (i32.const 0))))
    (block $done
      (loop $l
        (br_if $done (i32.eq (table.grow $t (ref.null func) (i32.const 65536)) (i32.const -1)))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $l)))
    (if (local.get $n)
      (then (call $out (i32.const 768) (i32.const 60)))
      (else (call $out (i32.const 256) (i32.const 46))))
    (i32.const 0))
  ;; $letter returns the byte after the first "name":" in the input.
  (func $letter (result i32)
    (local $i i32)
    (block $none
      (loop $l
        (br_if $none (i32.ge_u (local.get $i) (i32.const 1000)))
        (if (i64.eq (i64.load (i32.add (i32.const 1024) (local.get $i))) (i64.const 0x223A22656D616E22))
          (then (return (i32.load8_u (i32.add (i32.const 1032) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (i32.const 0)))
