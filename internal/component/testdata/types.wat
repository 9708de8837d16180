;; A component that re-exports imported functions and an interface, so
;; that its types need no core code: records, lists, variants, options,
;; results, enums, flags, tuples, chars, integers, a resource with a
;; method, and doc comments in a package-docs section. For the WIT view
;; and tool mapping tests. Built by build.sh.
(component
  (import "test:types/shapes-impl@1.2.0" (instance $shapes
    (type $pt (record (field "x" s32) (field "label" string)))
    (export "point" (type $pte (eq $pt)))
    (type $sh (variant (case "circle" f64) (case "square" (tuple f32 f32)) (case "none")))
    (export "shape" (type $she (eq $sh)))
    (type $col (enum "red" "green"))
    (export "color" (type $cole (eq $col)))
    (type $perm (flags "read" "write" "exec"))
    (export "perms" (type $permse (eq $perm)))
    (export "blob" (type $blob (sub resource)))
    (export "area" (func (param "s" $she) (result f64)))
    (export "move" (func (param "p" $pte) (param "by" (list $pte)) (result (list $pte))))
    (export "find" (func (param "name" string) (param "color" (option $cole)) (result (result $pte (error string)))))
    (export "check" (func (param "p" $permse) (param "c" char) (param "n" u8) (param "m" s64) (param "b" bool) (param "u" u64)))
    (export "[method]blob.size" (func (param "self" (borrow $blob)) (result u64)))
    (export "make-blob" (func (result (own $blob))))
  ))
  (export "test:types/shapes@1.2.0" (instance $shapes))
  (import "list-directory-impl" (func $ld (param "path" string) (result (result (list string) (error string)))))
  (export "list-directory" (func $ld))
  (import "get-time-impl" (func $now (result (tuple u64 u32))))
  (export "get-time" (func $now))
  (@custom "package-docs" "\00{\"docs\":\"Shapes and files.\",\"worlds\":{\"types\":{\"docs\":\"The test world.\",\"funcs\":{\"list-directory\":\"Lists the entries of a directory.\\n\\nFails when it cannot be read.\"}}},\"interfaces\":{\"shapes\":{\"docs\":\"Geometry.\",\"funcs\":{\"area\":{\"docs\":\"The area of a shape.\"}},\"types\":{\"point\":{\"docs\":\"A point on the plane.\",\"items\":{\"x\":\"Across.\"}}}}}}")
)
