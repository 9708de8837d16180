;; bigmin.wat: declares a minimum linear memory of 4096 pages (256 MiB),
;; above the limit it is configured with: the host must refuse to load it
;; rather than allocate that much.
(module
  (import "wasmcp" "output_write" (func $output_write (param i32 i32)))
  (memory (export "memory") 4096)
  (data (i32.const 0) "{\"abi\":1,\"name\":\"bigmin\",\"tools\":[{\"name\":\"big\"}]}")
  (func (export "wasmcp_call") (result i32)
    (call $output_write (i32.const 0) (i32.const 50))
    (i32.const 0)))
