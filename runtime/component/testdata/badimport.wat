;; A core module importing a lowered host function with a core type that
;; is not its flattening: instantiation fails. Built by build.sh.
(component
  (import "f" (func $f (param "x" u32) (result u32)))
  (core func $f-low (canon lower (func $f)))
  (core module $m
    (import "host" "f" (func (param i64) (result i64))))
  (core instance $i (instantiate $m
    (with "host" (instance (export "f" (func $f-low))))))
)
