;; garbage.wat: answers that are not valid results.
;;
;;   notjson          n  {"content":[          (truncated JSON)
;;   utf8_bad         u  a text block with the bytes FF FE (invalid UTF-8)
;;   shape            s  {"content":"nope"}    (JSON, but not a CallToolResult)
;;   list_result      l  [1,2,3]
;;   empty            e  nothing at all
;;   trailing         t  {"content":[]} {"x":1}
;;   deep             d  200,000 nested arrays
;;   garbage_error    g  status 1 with "not an error object"
;;   x_status         x  status 7 with a valid result
;;   bad_utf8_error   b  status 1, an error object with invalid UTF-8
;;   control_char     c  a raw NUL byte inside a JSON string
;;   input_required_empty  i  resultType input_required with nothing to ask
;;   alive            a  answers "alive"
;;
;; resources/read (any URI) answers {"contents":5}; prompts/get answers
;; {"messages":"nope"}.
(module
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (memory (export "memory") 8)

  (data (i32.const 0) "{\"abi\":1,\"name\":\"garbage\",\"tools\":[{\"name\":\"notjson\"},{\"name\":\"utf8_bad\"},{\"name\":\"shape\"},{\"name\":\"list_result\"},{\"name\":\"empty\"},{\"name\":\"trailing\"},{\"name\":\"deep\"},{\"name\":\"garbage_error\"},{\"name\":\"x_status\"},{\"name\":\"bad_utf8_error\"},{\"name\":\"control_char\"},{\"name\":\"input_required_empty\"},{\"name\":\"alive\"}],\"resources\":[{\"uri\":\"garbage://res\",\"name\":\"res\"}],\"prompts\":[{\"name\":\"garbage_prompt\"}]}\00")
  (data (i32.const 4096) "{\"content\":[{\"type\":\"text\",\"text\":\"alive\"}]}\00")
  (data (i32.const 4200) "{\"content\":[\00")
  (data (i32.const 4300) "{\"content\":[{\"type\":\"text\",\"text\":\"\ff\fe\"}]}\00")
  (data (i32.const 4400) "{\"content\":\"nope\"}\00")
  (data (i32.const 4500) "[1,2,3]\00")
  (data (i32.const 4600) "{\"content\":[]} {\"x\":1}\00")
  (data (i32.const 4700) "not an error object\00")
  (data (i32.const 4800) "{\"code\":-32000,\"message\":\"bad \ff bytes\",\"data\":\"\fe\"}\00")
  (data (i32.const 4900) "{\"content\":[{\"type\":\"text\",\"text\":\"a\00b\"}]}")
  (data (i32.const 5000) "{\"resultType\":\"input_required\"}\00")
  (data (i32.const 5100) "{\"contents\":5}\00")
  (data (i32.const 5200) "{\"messages\":\"nope\"}\00")

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

  (func $tool (param $n i32) (result i32)
    (local $i i32)
    (block $none
      (loop $l
        (br_if $none (i32.gt_u (i32.add (local.get $i) (i32.const 9)) (local.get $n)))
        (if (i64.eq (i64.load (i32.add (i32.const 65536) (local.get $i))) (i64.const 0x223A22656D616E22))
          (then (return (i32.load8_u (i32.add (i32.const 65544) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (i32.const 0))

  (func (export "wasmcp_call") (result i32)
    (local $n i32) (local $t i32) (local $i i32) (local $m i32)
    (local.set $n (call $input_read (i32.const 65536) (i32.const 65536)))
    (local.set $m (i32.load8_u (i32.const 65547)))
    (if (i32.eq (local.get $m) (i32.const 119)) ;; wasmcp/describe
      (then (call $out (i32.const 0)) (return (i32.const 0))))
    (if (i32.eq (local.get $m) (i32.const 114)) ;; resources/read
      (then (call $out (i32.const 5100)) (return (i32.const 0))))
    (if (i32.eq (local.get $m) (i32.const 112)) ;; prompts/get
      (then (call $out (i32.const 5200)) (return (i32.const 0))))
    (local.set $t (call $tool (local.get $n)))
    (if (i32.eq (local.get $t) (i32.const 110)) ;; n
      (then (call $out (i32.const 4200)) (return (i32.const 0))))
    (if (i32.eq (local.get $t) (i32.const 117)) ;; u
      (then (call $out (i32.const 4300)) (return (i32.const 0))))
    (if (i32.eq (local.get $t) (i32.const 115)) ;; s
      (then (call $out (i32.const 4400)) (return (i32.const 0))))
    (if (i32.eq (local.get $t) (i32.const 108)) ;; l
      (then (call $out (i32.const 4500)) (return (i32.const 0))))
    (if (i32.eq (local.get $t) (i32.const 101)) ;; e
      (then (return (i32.const 0))))
    (if (i32.eq (local.get $t) (i32.const 116)) ;; t
      (then (call $out (i32.const 4600)) (return (i32.const 0))))
    (if (i32.eq (local.get $t) (i32.const 100)) ;; d: 200,000 '[' at 131072
      (then
        (local.set $i (i32.const 0))
        (loop $l
          (i32.store8 (i32.add (i32.const 131072) (local.get $i)) (i32.const 91))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $l (i32.lt_u (local.get $i) (i32.const 200000))))
        (call $output_write (i32.const 131072) (i32.const 200000))
        (return (i32.const 0))))
    (if (i32.eq (local.get $t) (i32.const 103)) ;; g
      (then (call $out (i32.const 4700)) (return (i32.const 1))))
    (if (i32.eq (local.get $t) (i32.const 120)) ;; x
      (then (call $out (i32.const 4096)) (return (i32.const 7))))
    (if (i32.eq (local.get $t) (i32.const 98)) ;; b
      (then (call $out (i32.const 4800)) (return (i32.const 1))))
    (if (i32.eq (local.get $t) (i32.const 99)) ;; c: 42 bytes with a NUL inside
      (then (call $output_write (i32.const 4900) (i32.const 42)) (return (i32.const 0))))
    (if (i32.eq (local.get $t) (i32.const 105)) ;; i
      (then (call $out (i32.const 5000)) (return (i32.const 0))))
    (call $out (i32.const 4096))
    (i32.const 0)))
