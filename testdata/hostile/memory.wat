;; memory.wat: linear memory growth to the limit and past it.
;;
;;   grow        g  memory.grow 1 page at a time until refused; answers
;;                  "refused after N pages" (a normal result)
;;   huge_grow   h  one memory.grow of 65535 pages (4 GiB); answers
;;                  "refused" or "granted"
;;   trap_after_grow  t  grow until refused, then store past the end (a trap
;;                  after a refused grow: "out of memory")
;;   alive       a  answers "alive"
(module
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (memory (export "memory") 3)

  (data (i32.const 0) "{\"abi\":1,\"name\":\"memory\",\"tools\":[{\"name\":\"grow\"},{\"name\":\"huge_grow\"},{\"name\":\"trap_after_grow\"},{\"name\":\"alive\"}]}\00")
  (data (i32.const 4096) "{\"content\":[{\"type\":\"text\",\"text\":\"alive\"}]}\00")
  (data (i32.const 4200) "{\"content\":[{\"type\":\"text\",\"text\":\"refused after \00")
  (data (i32.const 4300) " pages\"}]}\00")
  (data (i32.const 4400) "{\"content\":[{\"type\":\"text\",\"text\":\"refused\"}]}\00")
  (data (i32.const 4500) "{\"content\":[{\"type\":\"text\",\"text\":\"granted\"}]}\00")

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

  ;; out_u writes n in decimal.
  (func $out_u (param $n i32)
    (local $p i32)
    (local.set $p (i32.const 8192))
    (loop $l
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $l (local.get $n)))
    (call $output_write (local.get $p) (i32.sub (i32.const 8192) (local.get $p))))

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

  (func $grow_all
    (loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1)))))

  (func (export "wasmcp_call") (result i32)
    (local $n i32) (local $t i32)
    (local.set $n (call $input_read (i32.const 65536) (i32.const 65536)))
    (if (i32.eq (i32.load8_u (i32.const 65547)) (i32.const 119))
      (then (call $out (i32.const 0)) (return (i32.const 0))))
    (local.set $t (call $tool (local.get $n)))
    (if (i32.eq (local.get $t) (i32.const 103)) ;; g
      (then
        (call $grow_all)
        (call $out (i32.const 4200))
        (call $out_u (memory.size))
        (call $out (i32.const 4300))
        (return (i32.const 0))))
    (if (i32.eq (local.get $t) (i32.const 104)) ;; h
      (then
        (if (i32.eq (memory.grow (i32.const 65535)) (i32.const -1))
          (then (call $out (i32.const 4400)))
          (else (call $out (i32.const 4500))))
        (return (i32.const 0))))
    (if (i32.eq (local.get $t) (i32.const 116)) ;; t
      (then
        (call $grow_all)
        (i32.store (i32.mul (memory.size) (i32.const 65536)) (i32.const 1))))
    (call $out (i32.const 4096))
    (i32.const 0)))
