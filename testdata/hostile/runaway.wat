;; runaway.wat: calls that never end on their own.
;;
;; Each tool is told apart by the first two letters of its name ($tool),
;; since spin and sleep share the first:
;;
;;   spin        sp  a tight loop with no calls
;;   host_spin   ho  a loop that calls the log import with an empty message
;;   sleep       sl  poll_oneoff for one hour, in a loop (the host caps each sleep)
;;   alive       al  answers "alive"
(module
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (import "wasmcp" "log" (func $log (param i32 i32 i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 3)

  (data (i32.const 0) "{\"abi\":1,\"name\":\"runaway\",\"tools\":[{\"name\":\"spin\"},{\"name\":\"host_spin\"},{\"name\":\"sleep\"},{\"name\":\"alive\"}]}\00")
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

  ;; $tool returns the first two bytes of the tool name (little-endian),
  ;; found after "name":" in the input, or 0.
  (func $tool (param $n i32) (result i32)
    (local $i i32)
    (block $none
      (loop $l
        (br_if $none (i32.gt_u (i32.add (local.get $i) (i32.const 10)) (local.get $n)))
        (if (i64.eq (i64.load (i32.add (i32.const 65536) (local.get $i))) (i64.const 0x223A22656D616E22))
          (then (return (i32.load16_u (i32.add (i32.const 65544) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (i32.const 0))

  (func (export "wasmcp_call") (result i32)
    (local $n i32) (local $t i32)
    (local.set $n (call $input_read (i32.const 65536) (i32.const 65536)))
    (if (i32.eq (i32.load8_u (i32.const 65547)) (i32.const 119))
      (then (call $out (i32.const 0)) (return (i32.const 0))))
    (local.set $t (call $tool (local.get $n)))
    (if (i32.eq (local.get $t) (i32.const 0x7073)) ;; sp
      (then (loop $l (br $l))))
    (if (i32.eq (local.get $t) (i32.const 0x6f68)) ;; ho
      (then (loop $l (call $log (i32.const 0) (i32.const 0) (i32.const 0)) (br $l))))
    (if (i32.eq (local.get $t) (i32.const 0x6c73)) ;; sl: one clock subscription at 8192, event at 8256
      (then
        (i64.store (i32.const 8192) (i64.const 0))             ;; userdata
        (i32.store8 (i32.const 8200) (i32.const 0))            ;; tag: clock
        (i32.store (i32.const 8208) (i32.const 1))             ;; clock id: monotonic
        (i64.store (i32.const 8216) (i64.const 3600000000000)) ;; timeout: 1 h
        (i64.store (i32.const 8224) (i64.const 0))             ;; precision
        (i32.store16 (i32.const 8232) (i32.const 0))           ;; flags: relative
        (loop $l ;; again and again, as the host cuts each sleep short
          (drop (call $poll_oneoff (i32.const 8192) (i32.const 8256) (i32.const 1) (i32.const 8320)))
          (br $l))))
    (call $out (i32.const 4096))
    (i32.const 0)))
