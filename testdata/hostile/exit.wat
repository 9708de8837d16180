;; exit.wat: proc_exit in the middle of a call.
;;
;;   exit7   7  proc_exit(7) after writing part of a result
;;   exit0   0  proc_exit(0) after writing part of a result: a "successful"
;;              exit is still not an answer
;;   alive   a  answers "alive"
(module
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 3)

  (data (i32.const 0) "{\"abi\":1,\"name\":\"exit\",\"tools\":[{\"name\":\"exit7\"},{\"name\":\"exit0\"},{\"name\":\"alive\"}]}\00")
  (data (i32.const 4096) "{\"content\":[{\"type\":\"text\",\"text\":\"alive\"}]}\00")
  (data (i32.const 4200) "{\"content\":[\00")

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
    (local $n i32)
    (local.set $n (call $input_read (i32.const 65536) (i32.const 65536)))
    (if (i32.eq (i32.load8_u (i32.const 65547)) (i32.const 119))
      (then (call $out (i32.const 0)) (return (i32.const 0))))
    (if (i32.eq (i32.load8_u (i32.const 65547)) (i32.const 116)) ;; tools/call
      (then
        (if (i32.eq (i32.load8_u (i32.add (i32.const 4)
                (i32.add (i32.const 65536) (call $find (local.get $n))))) (i32.const 55)) ;; exit7
          (then (call $out (i32.const 4200)) (call $proc_exit (i32.const 7))))
        (if (i32.eq (i32.load8_u (i32.add (i32.const 4)
                (i32.add (i32.const 65536) (call $find (local.get $n))))) (i32.const 48)) ;; exit0
          (then (call $out (i32.const 4200)) (call $proc_exit (i32.const 0))))))
    (call $out (i32.const 4096))
    (i32.const 0))

  ;; find returns the offset of the tool name in the envelope (after
  ;; "name":"), or 0.
  (func $find (param $n i32) (result i32)
    (local $i i32)
    (block $none
      (loop $l
        (br_if $none (i32.gt_u (i32.add (local.get $i) (i32.const 9)) (local.get $n)))
        (if (i64.eq (i64.load (i32.add (i32.const 65536) (local.get $i))) (i64.const 0x223A22656D616E22))
          (then (return (i32.add (local.get $i) (i32.const 8)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (i32.const 0)))
