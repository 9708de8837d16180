;; mountrace.wat: races a mount's path resolution with raw WASI calls. The
;; mount is the first preopen (fd 3). Tools, picked by the first letter of
;; the name:
;;
;;   probe   p  300 times: open and read sub/secret.txt, stat it, and create
;;              sub/created.txt. The mount's sub holds no secret.txt, so any
;;              open or stat that succeeds went somewhere else. Answers
;;              "opens O read R stats S made M" (R: reads whose first byte is
;;              'T', as in "TOP SECRET").
;;   swap    s  20000 times: rename sub -> swaptmp, dirlink -> sub,
;;              sub -> dirlink, swaptmp -> sub (dirlink being a symlink the
;;              host placed, pointing out of the mount): for a moment in
;;              each round sub is the symlink. Answers "swapped N failed F".
;;   writes  w  every write-ish call once, answering each errno in order:
;;              "create C write W mkdir M unlink U rmdir D rename R times T
;;              link L symlink S truncate X fdwrite F" (for a read-only
;;              mount, each must be 69, EROFS, except fdwrite on a file
;;              opened for reading: 8, EBADF).
(module
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_filestat_set_size" (func $fd_filestat_set_size (param i32 i64) (result i32)))
  (import "wasi_snapshot_preview1" "path_filestat_get" (func $path_filestat_get (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_filestat_set_times"
    (func $path_filestat_set_times (param i32 i32 i32 i32 i64 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_rename" (func $path_rename (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_create_directory" (func $path_create_directory (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_remove_directory" (func $path_remove_directory (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_unlink_file" (func $path_unlink_file (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_link" (func $path_link (param i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_symlink" (func $path_symlink (param i32 i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 3)

  (data (i32.const 0) "{\"abi\":1,\"name\":\"mountrace\",\"tools\":[{\"name\":\"probe\"},{\"name\":\"swap\"},{\"name\":\"writes\"}]}\00")
  (data (i32.const 4096) "{\"content\":[{\"type\":\"text\",\"text\":\"\00")
  (data (i32.const 4200) "\"}]}\00")
  (data (i32.const 4300) "sub/secret.txt\00")
  (data (i32.const 4400) "sub/created.txt\00")
  (data (i32.const 4500) "sub\00")
  (data (i32.const 4520) "swaptmp\00")
  (data (i32.const 4540) "dirlink\00")
  (data (i32.const 4600) "ok.txt\00")
  (data (i32.const 4620) "new.txt\00")
  (data (i32.const 4640) "newdir\00")
  (data (i32.const 4660) "moved.txt\00")
  (data (i32.const 4680) "hard.txt\00")
  (data (i32.const 4700) "sym\00")
  (data (i32.const 5000) "opens \00")
  (data (i32.const 5020) " read \00")
  (data (i32.const 5040) " stats \00")
  (data (i32.const 5060) " made \00")
  (data (i32.const 5080) "swapped \00")
  (data (i32.const 5100) " failed \00")
  (data (i32.const 5200) "create \00")
  (data (i32.const 5220) " write \00")
  (data (i32.const 5240) " mkdir \00")
  (data (i32.const 5260) " unlink \00")
  (data (i32.const 5280) " rmdir \00")
  (data (i32.const 5300) " rename \00")
  (data (i32.const 5320) " times \00")
  (data (i32.const 5340) " link \00")
  (data (i32.const 5360) " symlink \00")
  (data (i32.const 5380) " truncate \00")
  (data (i32.const 5400) " fdwrite \00")

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

  (func $out_u (param $n i32)
    (local $p i32)
    (local.set $p (i32.const 8192))
    (loop $l
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $l (local.get $n)))
    (call $output_write (local.get $p) (i32.sub (i32.const 8192) (local.get $p))))

  ;; label writes the NUL-terminated label at $p, then $n in decimal.
  (func $label (param $p i32) (param $n i32)
    (call $out (local.get $p))
    (call $out_u (local.get $n)))

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

  ;; open opens the NUL-terminated path at $p relative to fd 3, following
  ;; symlinks, with oflags $o and rights $r; the descriptor is at 9000.
  (func $open (param $p i32) (param $o i32) (param $r i64) (result i32)
    (call $path_open (i32.const 3) (i32.const 1) (local.get $p) (call $strlen (local.get $p))
      (local.get $o) (local.get $r) (local.get $r) (i32.const 0) (i32.const 9000)))

  (func $probe
    (local $i i32) (local $opens i32) (local $reads i32) (local $stats i32) (local $made i32) (local $fd i32)
    (loop $l
      (if (i32.eqz (call $open (i32.const 4300) (i32.const 0) (i64.const 2))) ;; fd_read
        (then
          (local.set $opens (i32.add (local.get $opens) (i32.const 1)))
          (local.set $fd (i32.load (i32.const 9000)))
          (i32.store (i32.const 10000) (i32.const 0))
          (i32.store (i32.const 9008) (i32.const 10000)) ;; iov.buf
          (i32.store (i32.const 9012) (i32.const 32))    ;; iov.len
          (drop (call $fd_read (local.get $fd) (i32.const 9008) (i32.const 1) (i32.const 9016)))
          (if (i32.eq (i32.load8_u (i32.const 10000)) (i32.const 84))
            (then (local.set $reads (i32.add (local.get $reads) (i32.const 1)))))
          (drop (call $fd_close (local.get $fd)))))
      (if (i32.eqz (call $path_filestat_get (i32.const 3) (i32.const 1) (i32.const 4300) (i32.const 14) (i32.const 9100)))
        (then (local.set $stats (i32.add (local.get $stats) (i32.const 1)))))
      (if (i32.eqz (call $open (i32.const 4400) (i32.const 1) (i64.const 0x1FFFFFFF)))
        (then
          (local.set $made (i32.add (local.get $made) (i32.const 1)))
          (drop (call $fd_close (i32.load (i32.const 9000))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 300))))
    (call $label (i32.const 5000) (local.get $opens))
    (call $label (i32.const 5020) (local.get $reads))
    (call $label (i32.const 5040) (local.get $stats))
    (call $label (i32.const 5060) (local.get $made)))

  ;; rename renames $a to $b in fd 3 and answers 1 if it failed.
  (func $rename (param $a i32) (param $b i32) (result i32)
    (i32.ne (i32.const 0) (call $path_rename (i32.const 3) (local.get $a) (call $strlen (local.get $a))
      (i32.const 3) (local.get $b) (call $strlen (local.get $b)))))

  (func $swap
    (local $i i32) (local $failed i32)
    (loop $l
      (local.set $failed (i32.add (local.get $failed) (call $rename (i32.const 4500) (i32.const 4520))))
      (local.set $failed (i32.add (local.get $failed) (call $rename (i32.const 4540) (i32.const 4500))))
      (local.set $failed (i32.add (local.get $failed) (call $rename (i32.const 4500) (i32.const 4540))))
      (local.set $failed (i32.add (local.get $failed) (call $rename (i32.const 4520) (i32.const 4500))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 20000))))
    (call $label (i32.const 5080) (local.get $i))
    (call $label (i32.const 5100) (local.get $failed)))

  (func $writes
    (local $e i32) (local $fd i32)
    ;; create new.txt
    (local.set $e (call $open (i32.const 4620) (i32.const 1) (i64.const 0x1FFFFFFF)))
    (if (i32.eqz (local.get $e)) (then (drop (call $fd_close (i32.load (i32.const 9000))))))
    (call $label (i32.const 5200) (local.get $e))
    ;; open ok.txt for writing (rights fd_write only)
    (local.set $e (call $open (i32.const 4600) (i32.const 0) (i64.const 64)))
    (if (i32.eqz (local.get $e)) (then (drop (call $fd_close (i32.load (i32.const 9000))))))
    (call $label (i32.const 5220) (local.get $e))
    (call $label (i32.const 5240) (call $path_create_directory (i32.const 3) (i32.const 4640) (i32.const 6)))
    (call $label (i32.const 5260) (call $path_unlink_file (i32.const 3) (i32.const 4600) (i32.const 6)))
    (call $label (i32.const 5280) (call $path_remove_directory (i32.const 3) (i32.const 4500) (i32.const 3)))
    (call $label (i32.const 5300) (call $path_rename (i32.const 3) (i32.const 4600) (i32.const 6) (i32.const 3) (i32.const 4660) (i32.const 9)))
    ;; set both times to now (ATIM_NOW | MTIM_NOW)
    (call $label (i32.const 5320) (call $path_filestat_set_times (i32.const 3) (i32.const 1) (i32.const 4600) (i32.const 6) (i64.const 0) (i64.const 0) (i32.const 10)))
    (call $label (i32.const 5340) (call $path_link (i32.const 3) (i32.const 0) (i32.const 4600) (i32.const 6) (i32.const 3) (i32.const 4680) (i32.const 8)))
    (call $label (i32.const 5360) (call $path_symlink (i32.const 4600) (i32.const 6) (i32.const 3) (i32.const 4700) (i32.const 3)))
    ;; truncate and write through a descriptor opened for reading (rights
    ;; fd_read only: wazero opens for writing when fd_write is asked)
    (local.set $e (call $open (i32.const 4600) (i32.const 0) (i64.const 2)))
    (if (local.get $e)
      (then
        (call $label (i32.const 5380) (local.get $e))
        (call $label (i32.const 5400) (local.get $e)))
      (else
        (local.set $fd (i32.load (i32.const 9000)))
        (call $label (i32.const 5380) (call $fd_filestat_set_size (local.get $fd) (i64.const 0)))
        (i32.store (i32.const 9008) (i32.const 4600)) ;; iov.buf: any bytes
        (i32.store (i32.const 9012) (i32.const 2))    ;; iov.len
        (call $label (i32.const 5400) (call $fd_write (local.get $fd) (i32.const 9008) (i32.const 1) (i32.const 9016)))
        (drop (call $fd_close (local.get $fd))))))

  (func (export "wasmcp_call") (result i32)
    (local $n i32) (local $t i32)
    (local.set $n (call $input_read (i32.const 65536) (i32.const 65536)))
    (if (i32.eq (i32.load8_u (i32.const 65547)) (i32.const 119))
      (then (call $out (i32.const 0)) (return (i32.const 0))))
    (local.set $t (call $tool (local.get $n)))
    (call $out (i32.const 4096))
    (if (i32.eq (local.get $t) (i32.const 112)) (then (call $probe)))  ;; p
    (if (i32.eq (local.get $t) (i32.const 115)) (then (call $swap)))   ;; s
    (if (i32.eq (local.get $t) (i32.const 119)) (then (call $writes))) ;; w
    (call $out (i32.const 4200))
    (i32.const 0)))
