;; greedy.wat: an extism/v2 plugin that hands the host functions more
;; than they should take, run through a real server by
;; internal/server/extism_budget_test.go. The tool is picked by the first
;; letter of its name (found after "name":" in the input):
;;
;;   post    http_request(POST https://example.com/) with a 60 MiB body
;;   elicit  create_elicitation with a 60 MiB JSON object
;;   fill    alloc 1 MiB blocks until the kernel refuses; returns the count
;;   deny    create_elicitation with a small object, 100,000 times; returns 7
;;   url     http_request to a 3 MiB URL
;;
;; The plugin is served without grants: every http_request and
;; create_elicitation is refused.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "input_load_u64" (func $input_load_u64 (param i64) (result i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "http_request" (func $http_request (param i64 i64) (result i64)))
  (import "extism:host/user" "create_elicitation" (func $create_elicitation (param i64) (result i64)))
  (memory (export "memory") 1)
  ;; 0: the list_tools answer (92 bytes)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"post\"},{\"name\":\"elicit\"},{\"name\":\"fill\"},{\"name\":\"deny\"},{\"name\":\"url\"}]}")
  ;; 256: a tool result (43 bytes)
  (data (i32.const 256) "{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}")
  ;; 512: the POST request (46 bytes)
  (data (i32.const 512) "{\"url\":\"https://example.com/\",\"method\":\"POST\"}")
  ;; 768: a small elicitation (24 bytes)
  (data (i32.const 768) "{\"message\":\"let me in?\"}")

  ;; copy returns a new block holding n bytes of linear memory from src.
  (func $copy (param $src i32) (param $n i32) (result i64)
    (local $b i64) (local $j i32)
    (local.set $b (call $alloc (i64.extend_i32_u (local.get $n))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
        (call $store_u8 (i64.add (local.get $b) (i64.extend_i32_u (local.get $j)))
          (i32.load8_u (i32.add (local.get $src) (local.get $j))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $next)))
    (local.get $b))

  ;; fill stores word w over the n bytes (a multiple of 8) of block b.
  (func $fill (param $b i64) (param $n i64) (param $w i64)
    (local $j i64)
    (block $done
      (loop $next
        (br_if $done (i64.ge_u (local.get $j) (local.get $n)))
        (call $store_u64 (i64.add (local.get $b) (local.get $j)) (local.get $w))
        (local.set $j (i64.add (local.get $j) (i64.const 8)))
        (br $next))))

  ;; done outputs a text result "done".
  (func $done (result i32)
    (call $output_set (call $copy (i32.const 256) (i32.const 43)) (i64.const 43))
    (i32.const 0))

  (func (export "list_tools") (result i32)
    (call $output_set (call $copy (i32.const 0) (i32.const 92)) (i64.const 92))
    (i32.const 0))

  ;; tool returns the first letter of the tool's name, 0 if none.
  (func $tool (result i32)
    (local $i i64) (local $n i64)
    (local.set $n (call $input_length))
    (block $none
      (loop $scan
        (br_if $none (i64.gt_u (i64.add (local.get $i) (i64.const 9)) (local.get $n)))
        ;; "name":" little-endian
        (if (i64.eq (call $input_load_u64 (local.get $i)) (i64.const 0x223a22656d616e22))
          (then (return (call $input_load_u8 (i64.add (local.get $i) (i64.const 8))))))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $scan)))
    (i32.const 0))

  (func (export "call_tool") (result i32)
    (local $t i32) (local $b i64) (local $n i32) (local $u i64)
    (local.set $t (call $tool))
    ;; p: post a 60 MiB body
    (if (i32.eq (local.get $t) (i32.const 0x70))
      (then
        (local.set $b (call $alloc (i64.const 0x3c00000)))
        (if (i64.eqz (local.get $b)) (then (return (i32.const 90))))
        (drop (call $http_request (call $copy (i32.const 512) (i32.const 46)) (local.get $b)))
        (return (call $done))))
    ;; e: elicit with a 60 MiB object {"a":"xxx...x"}
    (if (i32.eq (local.get $t) (i32.const 0x65))
      (then
        (local.set $b (call $alloc (i64.const 0x3c00000)))
        (if (i64.eqz (local.get $b)) (then (return (i32.const 90))))
        (call $fill (local.get $b) (i64.const 0x3c00000) (i64.const 0x7878787878787878))
        (call $store_u64 (local.get $b) (i64.const 0x7878223a2261227b)) ;; {"a":"xx
        (call $store_u64 (i64.add (local.get $b) (i64.const 0x3bffff8)) (i64.const 0x7d22787878787878)) ;; xxxxxx"}
        (drop (call $create_elicitation (local.get $b)))
        (return (call $done))))
    ;; f: alloc 1 MiB blocks until refused; return the count
    (if (i32.eq (local.get $t) (i32.const 0x66))
      (then
        (block $full
          (loop $more
            (br_if $full (i64.eqz (call $alloc (i64.const 0x100000))))
            (local.set $n (i32.add (local.get $n) (i32.const 1)))
            (br $more)))
        (return (local.get $n))))
    ;; d: 100,000 refused elicitations
    (if (i32.eq (local.get $t) (i32.const 0x64))
      (then
        (local.set $b (call $copy (i32.const 768) (i32.const 24)))
        (block $end
          (loop $again
            (br_if $end (i32.ge_u (local.get $n) (i32.const 100000)))
            (drop (call $create_elicitation (local.get $b)))
            (local.set $n (i32.add (local.get $n) (i32.const 1)))
            (br $again)))
        (return (i32.const 7))))
    ;; u: a request to a 3 MiB URL {"url":"https://example.com/aaa...a"}
    (if (i32.eq (local.get $t) (i32.const 0x75))
      (then
        (local.set $u (call $alloc (i64.const 0x300000)))
        (call $fill (local.get $u) (i64.const 0x300000) (i64.const 0x6161616161616161))
        (call $store_u8 (local.get $u) (i32.const 0x7b))                ;; {
        (call $store_u8 (i64.add (local.get $u) (i64.const 1)) (i32.const 0x22)) ;; "
        (call $store_u8 (i64.add (local.get $u) (i64.const 2)) (i32.const 0x75)) ;; u
        (call $store_u8 (i64.add (local.get $u) (i64.const 3)) (i32.const 0x72)) ;; r
        (call $store_u8 (i64.add (local.get $u) (i64.const 4)) (i32.const 0x6c)) ;; l
        (call $store_u8 (i64.add (local.get $u) (i64.const 5)) (i32.const 0x22)) ;; "
        (call $store_u8 (i64.add (local.get $u) (i64.const 6)) (i32.const 0x3a)) ;; :
        (call $store_u8 (i64.add (local.get $u) (i64.const 7)) (i32.const 0x22)) ;; "
        ;; https://example.com/ at 8..27
        (call $store_u64 (i64.add (local.get $u) (i64.const 8)) (i64.const 0x2f2f3a7370747468))  ;; https://
        (call $store_u64 (i64.add (local.get $u) (i64.const 16)) (i64.const 0x2e656c706d617865)) ;; example.
        (call $store_u64 (i64.add (local.get $u) (i64.const 24)) (i64.const 0x616161612f6d6f63)) ;; com/aaaa
        (call $store_u64 (i64.add (local.get $u) (i64.const 0x2ffff8)) (i64.const 0x7d22616161616161)) ;; aaaaaa"}
        (drop (call $http_request (local.get $u) (i64.const 0)))
        (return (call $done))))
    (i32.const 1))
)
