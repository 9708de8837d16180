;; rawfs.wat: path escapes through a granted mount with raw WASI calls, so
;; that no libc path handling stands between the plugin and the host. The
;; mount is the first preopen (fd 3). Each tool opens one path relative to
;; it, following symlinks, and answers "read:<first bytes>" or "errno N".
;;
;;   ok          o  ok.txt                   (inside: must work)
;;   dotdot      d  ../secret.txt
;;   subdotdot   s  sub/../../secret.txt
;;   link        l  etclink/passwd            (a symlink in the mount to /etc)
;;   abs         a  /etc/passwd
;;   mklink      m  path_symlink("../../../../../../../../etc", "esc"), then open
;;                  esc/passwd
;;                  (creating a way out through a read-write mount)
(module
  (import "wasmcp" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_symlink" (func $path_symlink (param i32 i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 3)

  (data (i32.const 0) "{\"abi\":1,\"name\":\"rawfs\",\"tools\":[{\"name\":\"ok\"},{\"name\":\"dotdot\"},{\"name\":\"subdotdot\"},{\"name\":\"link\"},{\"name\":\"abs\"},{\"name\":\"mklink\"}]}\00")
  (data (i32.const 4096) "{\"content\":[{\"type\":\"text\",\"text\":\"\00")
  (data (i32.const 4200) "\"}]}\00")
  (data (i32.const 4300) "errno \00")
  (data (i32.const 4400) "read:\00")
  (data (i32.const 4500) "ok.txt\00")
  (data (i32.const 4600) "../secret.txt\00")
  (data (i32.const 4700) "sub/../../secret.txt\00")
  (data (i32.const 4800) "etclink/passwd\00")
  (data (i32.const 4900) "/etc/passwd\00")
  (data (i32.const 5000) "../../../../../../../../etc\00")
  (data (i32.const 5100) "esc\00")
  (data (i32.const 5200) "esc/passwd\00")
  (data (i32.const 5300) "symlink errno \00")
  (data (i32.const 5400) ", \00")

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

  ;; open_read opens path (NUL-terminated) relative to fd 3 and writes
  ;; "read:<up to 32 bytes, JSON-unsafe bytes as '.'>" or "errno N".
  (func $open_read (param $path i32)
    (local $e i32) (local $i i32) (local $n i32) (local $c i32)
    (local.set $e (call $path_open (i32.const 3) (i32.const 1)
      (local.get $path) (call $strlen (local.get $path))
      (i32.const 0) (i64.const 0x1FFFFFFF) (i64.const 0x1FFFFFFF) (i32.const 0) (i32.const 9000)))
    (if (local.get $e)
      (then (call $out (i32.const 4300)) (call $out_u (local.get $e)) (return)))
    (i32.store (i32.const 9008) (i32.const 10000)) ;; iov.buf
    (i32.store (i32.const 9012) (i32.const 32))    ;; iov.len
    (local.set $e (call $fd_read (i32.load (i32.const 9000)) (i32.const 9008) (i32.const 1) (i32.const 9016)))
    (if (local.get $e)
      (then (call $out (i32.const 4300)) (call $out_u (local.get $e)) (return)))
    (local.set $n (i32.load (i32.const 9016)))
    (loop $l
      (if (i32.lt_u (local.get $i) (local.get $n))
        (then
          (local.set $c (i32.load8_u (i32.add (i32.const 10000) (local.get $i))))
          (if (i32.or (i32.or (i32.lt_u (local.get $c) (i32.const 32)) (i32.ge_u (local.get $c) (i32.const 127)))
                      (i32.or (i32.eq (local.get $c) (i32.const 34)) (i32.eq (local.get $c) (i32.const 92))))
            (then (i32.store8 (i32.add (i32.const 10000) (local.get $i)) (i32.const 46))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $l))))
    (call $out (i32.const 4400))
    (call $output_write (i32.const 10000) (local.get $n)))

  (func (export "wasmcp_call") (result i32)
    (local $n i32) (local $t i32)
    (local.set $n (call $input_read (i32.const 65536) (i32.const 65536)))
    (if (i32.eq (i32.load8_u (i32.const 65547)) (i32.const 119))
      (then (call $out (i32.const 0)) (return (i32.const 0))))
    (local.set $t (call $tool (local.get $n)))
    (call $out (i32.const 4096))
    (if (i32.eq (local.get $t) (i32.const 111)) (then (call $open_read (i32.const 4500)))) ;; o
    (if (i32.eq (local.get $t) (i32.const 100)) (then (call $open_read (i32.const 4600)))) ;; d
    (if (i32.eq (local.get $t) (i32.const 115)) (then (call $open_read (i32.const 4700)))) ;; s
    (if (i32.eq (local.get $t) (i32.const 108)) (then (call $open_read (i32.const 4800)))) ;; l
    (if (i32.eq (local.get $t) (i32.const 97)) (then (call $open_read (i32.const 4900))))  ;; a
    (if (i32.eq (local.get $t) (i32.const 109)) ;; m
      (then
        (call $out (i32.const 5300))
        (call $out_u (call $path_symlink (i32.const 5000) (i32.const 27) (i32.const 3) (i32.const 5100) (i32.const 3)))
        (call $out (i32.const 5400))
        (call $open_read (i32.const 5200))))
    (call $out (i32.const 4200))
    (i32.const 0)))
