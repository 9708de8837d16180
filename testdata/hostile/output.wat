;; output.wat: output over the per-call cap, and host imports given
;; pointers and lengths outside the module's memory.
;;
;;   huge          h  one output_write of 1 MiB (over the cap)
;;   drip          d  1-byte output_writes forever (the cap stops it)
;;   write_oob     w  output_write(0xFFFFFF00, 4096)
;;   write_wrap    W  output_write(0xFFFFFFFF, 0xFFFFFFFF): ptr+len wraps
;;   read_oob      r  input_read(0xFFFFFF00, 4096) with one byte left to read
;;   log_oob       l  log(1, 100, 0x7FFFFFFF)
;;   result_oob    R  call "log" (result "{}" pending), then result_read(0xFFFFFFF0, 16)
;;   call_oob      c  call with method and params pointers out of memory:
;;                    answers the errno it got
;;   call_huge     C  call with a params length of 0xFFFFFFFF: answers the errno
;;   zero_oob      z  output_write and input_read of 0 bytes at 0xFFFFFFFF:
;;                    no-ops, answers "zero ok"
;;   alive         a  answers "alive"
(module
  (import "wasmcp" "input_len" (func $input_len (result i32)))
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (import "wasmcp" "log" (func $log (param i32 i32 i32)))
  (import "wasmcp" "call" (func $call (param i32 i32 i32 i32) (result i32)))
  (import "wasmcp" "result_read" (func $result_read (param i32 i32) (result i32)))
  (memory (export "memory") 20)

  (data (i32.const 0) "{\"abi\":1,\"name\":\"output\",\"tools\":[{\"name\":\"huge\"},{\"name\":\"drip\"},{\"name\":\"write_oob\"},{\"name\":\"Write_wrap\"},{\"name\":\"read_oob\"},{\"name\":\"log_oob\"},{\"name\":\"Result_oob\"},{\"name\":\"call_oob\"},{\"name\":\"Call_huge\"},{\"name\":\"zero_oob\"},{\"name\":\"alive\"}]}\00")
  (data (i32.const 4096) "{\"content\":[{\"type\":\"text\",\"text\":\"alive\"}]}\00")
  (data (i32.const 4200) "{\"content\":[{\"type\":\"text\",\"text\":\"errno \00")
  (data (i32.const 4300) "\"}]}\00")
  (data (i32.const 4400) "{\"content\":[{\"type\":\"text\",\"text\":\"zero ok\"}]}\00")
  (data (i32.const 4500) "{\"content\":[{\"type\":\"text\",\"text\":\"no trap\"}]}\00")
  (data (i32.const 4600) "log\00")
  (data (i32.const 4610) "{\"level\":\"debug\",\"data\":\"x\"}\00")

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

  ;; out_i writes n (signed) in decimal.
  (func $out_i (param $n i32)
    (local $p i32) (local $neg i32)
    (local.set $neg (i32.lt_s (local.get $n) (i32.const 0)))
    (if (local.get $neg) (then (local.set $n (i32.sub (i32.const 0) (local.get $n)))))
    (local.set $p (i32.const 8192))
    (loop $l
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $l (local.get $n)))
    (if (local.get $neg)
      (then
        (local.set $p (i32.sub (local.get $p) (i32.const 1)))
        (i32.store8 (local.get $p) (i32.const 45))))
    (call $output_write (local.get $p) (i32.sub (i32.const 8192) (local.get $p))))

  (func $errno (param $e i32) (result i32)
    (call $out (i32.const 4200))
    (call $out_i (local.get $e))
    (call $out (i32.const 4300))
    (i32.const 0))

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
    (local $n i32) (local $t i32)
    ;; Leave the last byte of the envelope (its closing brace) unread, so
    ;; that read_oob's input_read has something to copy.
    (local.set $n (call $input_read (i32.const 65536) (i32.sub (call $input_len) (i32.const 1))))
    (if (i32.eq (i32.load8_u (i32.const 65547)) (i32.const 119))
      (then (call $out (i32.const 0)) (return (i32.const 0))))
    (local.set $t (call $tool (local.get $n)))
    (if (i32.eq (local.get $t) (i32.const 104)) ;; h
      (then (call $output_write (i32.const 131072) (i32.const 1048576))))
    (if (i32.eq (local.get $t) (i32.const 100)) ;; d
      (then (loop $l (call $output_write (i32.const 0) (i32.const 1)) (br $l))))
    (if (i32.eq (local.get $t) (i32.const 119)) ;; w
      (then (call $output_write (i32.const 0xFFFFFF00) (i32.const 4096))))
    (if (i32.eq (local.get $t) (i32.const 87)) ;; W
      (then (call $output_write (i32.const 0xFFFFFFFF) (i32.const 0xFFFFFFFF))))
    (if (i32.eq (local.get $t) (i32.const 114)) ;; r
      (then (drop (call $input_read (i32.const 0xFFFFFF00) (i32.const 4096)))))
    (if (i32.eq (local.get $t) (i32.const 108)) ;; l
      (then (call $log (i32.const 1) (i32.const 100) (i32.const 0x7FFFFFFF))))
    (if (i32.eq (local.get $t) (i32.const 82)) ;; R
      (then
        (drop (call $call (i32.const 4600) (i32.const 3) (i32.const 4610) (call $strlen (i32.const 4610))))
        (drop (call $result_read (i32.const 0xFFFFFFF0) (i32.const 16)))))
    (if (i32.eq (local.get $t) (i32.const 99)) ;; c
      (then (return (call $errno (call $call (i32.const 0xFFFFFFF0) (i32.const 64) (i32.const 0xFFFFFF00) (i32.const 1024))))))
    (if (i32.eq (local.get $t) (i32.const 67)) ;; C
      (then (return (call $errno (call $call (i32.const 4600) (i32.const 3) (i32.const 0) (i32.const 0xFFFFFFFF))))))
    (if (i32.eq (local.get $t) (i32.const 122)) ;; z
      (then
        (call $output_write (i32.const 0xFFFFFFFF) (i32.const 0))
        (drop (call $input_read (i32.const 0xFFFFFFFF) (i32.const 0)))
        (call $out (i32.const 4400))
        (return (i32.const 0))))
    (if (i32.eq (local.get $t) (i32.const 97)) ;; a
      (then (call $out (i32.const 4096)) (return (i32.const 0))))
    (call $out (i32.const 4500))
    (i32.const 0)))
