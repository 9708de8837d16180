;; hostile.wat: an Extism module that hands the kernel hostile handles and
;; lengths. Each export is one case of runtime/extism_test.go.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "free" (func $free (param i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "load_u64" (func $load_u64 (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u64" (func $input_load_u64 (param i64) (result i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  (import "extism:host/env" "var_get" (func $var_get (param i64) (result i64)))
  (import "extism:host/env" "var_set" (func $var_set (param i64 i64)))
  (import "extism:host/env" "http_request" (func $http_request (param i64 i64) (result i64)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"url\":\"https://example.com/\"}")

  (global $out (mut i64) (i64.const 0))
  (global $i (mut i32) (i32.const 0))
  ;; put appends one word to the output block.
  (func $put (param $v i64)
    (call $store_u64 (i64.add (global.get $out) (i64.extend_i32_u (i32.mul (global.get $i) (i32.const 8)))) (local.get $v))
    (global.set $i (i32.add (global.get $i) (i32.const 1))))

  ;; probe: 16 words, each the kernel's answer to a hostile call.
  (func (export "probe") (result i32)
    (local $b i64) (local $c i64)
    (global.set $out (call $alloc (i64.const 128)))
    (global.set $i (i32.const 0))
    (call $put (call $alloc (i64.const 0x8000000000000000)))   ;; 0: alloc(2^63) = 0
    (call $put (call $alloc (i64.const -1)))                   ;; 1: alloc(2^64-1) = 0
    (local.set $b (call $alloc (i64.const 12)))
    (local.set $c (call $alloc (i64.const 8)))
    (call $store_u64 (local.get $c) (i64.const 0x0102030405060708))
    (call $store_u64 (local.get $b) (i64.const 0x1111111111111111))
    (call $store_u64 (i64.add (local.get $b) (i64.const 8)) (i64.const -1))  ;; straddles: no-op
    (call $put (call $load_u64 (i64.add (local.get $b) (i64.const 8))))   ;; 2: straddles the end = 0
    (call $put (call $load_u64 (local.get $b)))                           ;; 3: 0x1111...
    (call $put (call $length (i64.add (local.get $b) (i64.const 1))))     ;; 4: not a block start = 0
    ;; stores into b's padding must not land
    (call $store_u8 (i64.add (local.get $b) (i64.const 13)) (i32.const 0xff))
    (call $store_u64 (i64.add (local.get $b) (i64.const 12)) (i64.const -1))
    (call $put (call $load_u64 (local.get $c)))                           ;; 5: c unchanged 0x0102...
    (call $free (local.get $b))
    (call $put (call $load_u64 (local.get $b)))                           ;; 6: freed = 0
    (call $put (call $length (local.get $b)))                             ;; 7: freed = 0
    (call $put (call $load_u64 (i64.const 0)))                            ;; 8: null = 0
    (call $put (call $load_u64 (i64.const -8)))                           ;; 9: 2^64-8 = 0
    (call $put (i64.extend_i32_u (call $load_u8 (i64.const 0x7fffffffffffffff)))) ;; 10: = 0
    (call $put (call $input_load_u64 (i64.const 0x8000000000000000)))      ;; 11: = 0
    (call $put (call $length (i64.const 0)))                              ;; 12: = 0
    (call $free (i64.const 0))
    (call $free (i64.const -1))
    (call $free (local.get $b))                                           ;; double free: no-op
    (call $put (call $var_get (i64.const 12345)))                         ;; 13: bad key = 0
    (call $var_set (i64.const 999999) (local.get $c))                     ;; bad key: no-op
    (call $put (call $length (local.get $c)))                             ;; 14: = 8
    (call $put (call $length (global.get $out)))                          ;; 15: = 128
    (call $output_set (global.get $out) (i64.const 128))
    (i32.const 0))

  ;; badout: output_set with ranges outside any block is a no-op.
  (func (export "badout") (result i32)
    (local $b i64)
    (local.set $b (call $alloc (i64.const 8)))
    (call $output_set (i64.const 123456) (i64.const 4))
    (call $output_set (local.get $b) (i64.const 0x10000000000))
    (call $output_set (local.get $b) (i64.const -1))
    (i32.const 0))

  ;; bigout: a 1 MiB output (over a small MaxOutput).
  (func (export "bigout") (result i32)
    (local $b i64)
    (local.set $b (call $alloc (i64.const 0x100000)))
    (call $output_set (local.get $b) (i64.const 0x100000))
    (i32.const 0))

  ;; fail: a non-zero return with a bad error handle: the host names the rc.
  (func (export "fail") (result i32)
    (call $error_set (i64.const 77777))
    (i32.const 3))

  ;; fill: allocate 1 MiB blocks until the kernel says no; output the count.
  (func $fill (export "fill") (result i32)
    (local $n i64) (local $b i64)
    (block $done
      (loop $again
        (local.set $b (call $alloc (i64.const 0x100000)))
        (br_if $done (i64.eqz (local.get $b)))
        (local.set $n (i64.add (local.get $n) (i64.const 1)))
        (br $again)))
    (local.set $b (call $alloc (i64.const 8)))
    (if (i64.eqz (local.get $b)) (then (return (i32.const 9))))
    (call $store_u64 (local.get $b) (local.get $n))
    (call $output_set (local.get $b) (i64.const 8))
    (i32.const 0))

  ;; growfill: grow the linear memory by 4 MiB, then fill as fill does:
  ;; the kernel gets only what the linear memory leaves of the limit.
  (func (export "growfill") (result i32)
    (if (i32.lt_s (memory.grow (i32.const 64)) (i32.const 0)) (then (return (i32.const 8))))
    (call $fill))

  ;; vars: set 64 KiB vars under distinct one-byte keys until the bound
  ;; stops them; output how many landed.
  (func (export "vars") (result i32)
    (local $k i64) (local $v i64) (local $n i64) (local $j i32)
    (local.set $v (call $alloc (i64.const 0x10000)))
    (local.set $k (call $alloc (i64.const 1)))
    (block $done
      (loop $again
        (br_if $done (i32.ge_u (local.get $j) (i32.const 100)))
        (call $store_u8 (local.get $k) (local.get $j))
        (call $var_set (local.get $k) (local.get $v))
        (if (i64.ne (call $var_get (local.get $k)) (i64.const 0))
          (then (local.set $n (i64.add (local.get $n) (i64.const 1)))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $again)))
    (local.set $k (call $alloc (i64.const 8)))
    (call $store_u64 (local.get $k) (local.get $n))
    (call $output_set (local.get $k) (i64.const 8))
    (i32.const 0))

  ;; fetch: an http_request to https://example.com/.
  (func (export "fetch") (result i32)
    (local $r i64) (local $j i32)
    (local.set $r (call $alloc (i64.const 30)))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $j) (i32.const 30)))
        (call $store_u8 (i64.add (local.get $r) (i64.extend_i32_u (local.get $j))) (i32.load8_u (local.get $j)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $copy)))
    (drop (call $http_request (local.get $r) (i64.const 0)))
    (i32.const 0))

  ;; echo: the input back.
  (func (export "echo") (result i32)
    (local $n i64) (local $b i64) (local $j i64)
    (local.set $n (call $input_length))
    (if (i64.eqz (local.get $n)) (then (return (i32.const 0))))
    (local.set $b (call $alloc (i64.add (local.get $n) (i64.const 8))))
    (block $done
      (loop $copy
        (br_if $done (i64.ge_u (local.get $j) (local.get $n)))
        (call $store_u64 (i64.add (local.get $b) (local.get $j)) (call $input_load_u64 (local.get $j)))
        (local.set $j (i64.add (local.get $j) (i64.const 8)))
        (br $copy)))
    (call $output_set (local.get $b) (local.get $n))
    (i32.const 0))

  (func (export "spin") (result i32)
    (loop $forever (br $forever))
    (i32.const 0))

  (func (export "crash") (result i32)
    unreachable)

  (func (export "takes_args") (param i32) (result i32)
    (i32.const 0))
)
