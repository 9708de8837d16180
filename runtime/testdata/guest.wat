;; guest.wat: a hand-written reactor plugin that does one thing per call,
;; chosen by the first byte of its input. Built by build.sh (wat2wasm).
;;   e  echo the input                     s  echo, return status byte[1]
;;   l  loop forever                       g  grow memory until refused, then trap
;;   G  grow by byte[1] pages, return 0    f  write output forever
;;   t  trap (unreachable)                 x  proc_exit(3)
;;   r  unbounded recursion                L  log(byte[1]-'0', rest)
;;   R  endless recursion of depth 64 (a binary tree of calls, no loop)
;;   c  "c<method>\n<params>": call the host; output = i32 r (LE) + result bytes
;;   n  "n" + u32 count (LE, unaligned): count loop iterations; output = the sum (i32 LE)
;;   F  fuzz driver: byte[1] picks an import, 4 i32 args follow (LE, unaligned);
;;      output = the import's i32 result (LE)
;;   z  sleep forever, 1 ms at a time (poll_oneoff in a loop)
;;   Z  sleep forever, an hour at a time (the host caps each sleep)
(module
  (import "wasmcp" "input_len" (func $input_len (result i32)))
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (import "wasmcp" "log" (func $log (param i32 i32 i32)))
  (import "wasmcp" "call" (func $call (param i32 i32 i32 i32) (result i32)))
  (import "wasmcp" "result_read" (func $result_read (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)

  ;; ensure grows memory so that [0, end) is valid, trapping if it cannot.
  (func $ensure (param $end i64)
    (local $need i32)
    (local.set $need (i32.wrap_i64 (i64.shr_u (i64.add (local.get $end) (i64.const 65535)) (i64.const 16))))
    (if (i32.gt_u (local.get $need) (memory.size))
      (then
        (if (i32.eq (memory.grow (i32.sub (local.get $need) (memory.size))) (i32.const -1))
          (then unreachable)))))

  (func $rec (param i32) (result i32)
    (i32.add (call $rec (i32.add (local.get 0) (i32.const 1))) (i32.const 1)))

  ;; tree calls itself twice down to depth n: 2^n calls, no loop.
  (func $tree (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 1))
      (else (i32.add (call $tree (i32.sub (local.get $n) (i32.const 1)))
                     (call $tree (i32.sub (local.get $n) (i32.const 1)))))))

  ;; read_result copies the whole pending result to dst and returns its size.
  (func $read_result (param $dst i32) (result i32)
    (local $total i32) (local $k i32)
    (loop $l
      (call $ensure (i64.add (i64.extend_i32_u (i32.add (local.get $dst) (local.get $total))) (i64.const 4096)))
      (local.set $k (call $result_read (i32.add (local.get $dst) (local.get $total)) (i32.const 4096)))
      (local.set $total (i32.add (local.get $total) (local.get $k)))
      (br_if $l (i32.gt_u (local.get $k) (i32.const 0))))
    (local.get $total))

  (func (export "wasmcp_call") (result i32)
    (local $n i32) (local $op i32) (local $r i32) (local $i i32) (local $dst i32)
    (local.set $n (call $input_len))
    (call $ensure (i64.add (i64.const 1024) (i64.extend_i32_u (local.get $n))))
    (drop (call $input_read (i32.const 1024) (local.get $n)))
    (if (i32.eqz (local.get $n)) (then (return (i32.const 0))))
    (local.set $op (i32.load8_u (i32.const 1024)))

    (if (i32.eq (local.get $op) (i32.const 101)) ;; e
      (then (call $output_write (i32.const 1024) (local.get $n)) (return (i32.const 0))))
    (if (i32.eq (local.get $op) (i32.const 115)) ;; s
      (then (call $output_write (i32.const 1024) (local.get $n))
            (return (i32.load8_u (i32.const 1025)))))
    (if (i32.eq (local.get $op) (i32.const 108)) ;; l
      (then (loop $l (br $l))))
    (if (i32.or (i32.eq (local.get $op) (i32.const 122)) (i32.eq (local.get $op) (i32.const 90))) ;; z, Z: one relative clock subscription at 0, event at 64
      (then
        (i64.store (i32.const 0) (i64.const 0))         ;; userdata
        (i32.store8 (i32.const 8) (i32.const 0))        ;; tag: clock
        (i32.store (i32.const 16) (i32.const 1))        ;; clock id: monotonic
        (i64.store (i32.const 24)                       ;; timeout: 1 h (Z), 1 ms (z)
          (select (i64.const 3600000000000) (i64.const 1000000) (i32.eq (local.get $op) (i32.const 90))))
        (i64.store (i32.const 32) (i64.const 0))        ;; precision
        (i32.store16 (i32.const 40) (i32.const 0))      ;; flags: relative
        (loop $l
          (drop (call $poll_oneoff (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 128)))
          (br $l))))
    (if (i32.eq (local.get $op) (i32.const 103)) ;; g
      (then (loop $l (br_if $l (i32.ne (memory.grow (i32.const 16)) (i32.const -1)))) unreachable))
    (if (i32.eq (local.get $op) (i32.const 71)) ;; G
      (then (drop (memory.grow (i32.load8_u (i32.const 1025)))) (return (i32.const 0))))
    (if (i32.eq (local.get $op) (i32.const 102)) ;; f
      (then (loop $l (call $output_write (i32.const 1024) (local.get $n)) (br $l))))
    (if (i32.eq (local.get $op) (i32.const 116)) ;; t
      (then unreachable))
    (if (i32.eq (local.get $op) (i32.const 120)) ;; x
      (then (call $proc_exit (i32.const 3))))
    (if (i32.eq (local.get $op) (i32.const 114)) ;; r
      (then (return (call $rec (i32.const 0)))))
    (if (i32.eq (local.get $op) (i32.const 82)) ;; R
      (then (return (call $tree (i32.const 64)))))
    (if (i32.eq (local.get $op) (i32.const 76)) ;; L
      (then
        (call $log (i32.sub (i32.load8_u (i32.const 1025)) (i32.const 48))
                   (i32.const 1026) (i32.sub (local.get $n) (i32.const 2)))
        (return (i32.const 0))))
    (if (i32.eq (local.get $op) (i32.const 99)) ;; c
      (then
        (local.set $i (i32.const 1))
        (block $found
          (loop $l
            (br_if $found (i32.ge_u (local.get $i) (local.get $n)))
            (br_if $found (i32.eq (i32.load8_u (i32.add (i32.const 1024) (local.get $i))) (i32.const 10)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $l)))
        (local.set $r
          (call $call
            (i32.const 1025) (i32.sub (local.get $i) (i32.const 1))
            (i32.add (i32.const 1025) (local.get $i))
            (select (i32.sub (i32.sub (local.get $n) (local.get $i)) (i32.const 1))
                    (i32.const 0)
                    (i32.lt_u (local.get $i) (local.get $n)))))
        (i32.store (i32.const 0) (local.get $r))
        (call $output_write (i32.const 0) (i32.const 4))
        (local.set $dst (i32.add (i32.const 1024) (local.get $n)))
        (local.set $r (call $read_result (local.get $dst)))
        (call $output_write (local.get $dst) (local.get $r))
        (return (i32.const 0))))
    (if (i32.eq (local.get $op) (i32.const 110)) ;; n
      (then
        (local.set $i (i32.load (i32.const 1025)))
        (local.set $r (i32.const 0))
        (block $done
          (loop $l
            (br_if $done (i32.eqz (local.get $i)))
            (local.set $r (i32.add (local.get $r) (local.get $i)))
            (local.set $i (i32.sub (local.get $i) (i32.const 1)))
            (br $l)))
        (i32.store (i32.const 0) (local.get $r))
        (call $output_write (i32.const 0) (i32.const 4))
        (return (i32.const 0))))
    (if (i32.eq (local.get $op) (i32.const 70)) ;; F
      (then
        (local.set $i (i32.load8_u (i32.const 1025)))
        (if (i32.eq (local.get $i) (i32.const 0))
          (then (local.set $r (call $input_read (i32.load (i32.const 1026)) (i32.load (i32.const 1030))))))
        (if (i32.eq (local.get $i) (i32.const 1))
          (then (call $output_write (i32.load (i32.const 1026)) (i32.load (i32.const 1030)))))
        (if (i32.eq (local.get $i) (i32.const 2))
          (then (call $log (i32.load (i32.const 1026)) (i32.load (i32.const 1030)) (i32.load (i32.const 1034)))))
        (if (i32.eq (local.get $i) (i32.const 3))
          (then (local.set $r (call $call (i32.load (i32.const 1026)) (i32.load (i32.const 1030))
                                          (i32.load (i32.const 1034)) (i32.load (i32.const 1038))))))
        (if (i32.eq (local.get $i) (i32.const 4))
          (then (local.set $r (call $result_read (i32.load (i32.const 1026)) (i32.load (i32.const 1030))))))
        (if (i32.eq (local.get $i) (i32.const 5))
          (then (local.set $r (call $input_len))))
        (i32.store (i32.const 0) (local.get $r))
        (call $output_write (i32.const 0) (i32.const 4))
        (return (i32.const 0))))
    (i32.const 0)))
