;; Exports made the way wit-component makes them: functions lifted from a
;; core module, and an interface exported as the instance of a nested
;; component instantiated with those functions (its exports ascribed
;; their types), under a plain name and under an interface name. Wassette
;; names the tools of the first "tools_..." and of the second
;; "my_pkg_tools_1_0_0_..."; built by build.sh.
(component
  (core module $m
    (memory (export "memory") 1)
    (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) unreachable)
    (func (export "ping") unreachable)
    (func (export "tools#sum") (param i32 i32) (result i32) unreachable)
    (func (export "tools#pick") (param i32 i64 i32) (result i32) unreachable)
  )
  (core instance $i (instantiate $m))
  (alias core export $i "memory" (core memory $mem))
  (alias core export $i "cabi_realloc" (core func $realloc))
  (alias core export $i "ping" (core func $ping-core))
  (alias core export $i "tools#sum" (core func $sum-core))
  (alias core export $i "tools#pick" (core func $pick-core))
  (func $ping (canon lift (core func $ping-core)))
  (export "ping" (func $ping))
  (type $choice (variant (case "none") (case "text" string) (case "num" s64)))
  (func $sum (param "a" u32) (param "b" u32) (result u32) (canon lift (core func $sum-core)))
  (func $pick (param "c" $choice) (result string)
    (canon lift (core func $pick-core) (memory $mem) (realloc $realloc) string-encoding=utf8))
  (component $wrap
    (import "import-func-sum" (func $s (param "a" u32) (param "b" u32) (result u32)))
    (type $c (variant (case "none") (case "text" string) (case "num" s64)))
    (import "import-type-choice" (type $ci (eq $c)))
    (import "import-func-pick" (func $p (param "c" $ci) (result string)))
    (type $c2 (variant (case "none") (case "text" string) (case "num" s64)))
    (export $ce "choice" (type $c2))
    (export "sum" (func $s) (func (param "a" u32) (param "b" u32) (result u32)))
    (export "pick" (func $p) (func (param "c" $ce) (result string)))
  )
  (instance $tools (instantiate $wrap
    (with "import-func-sum" (func $sum))
    (with "import-type-choice" (type $choice))
    (with "import-func-pick" (func $pick))
  ))
  (export "tools" (instance $tools))
  (export "my:pkg/tools@1.0.0" (instance $tools))
)
