;; refused_user.wat: an Extism module importing what the host refuses (extism:host/user.get_keyring_secret).
(module
  (import "extism:host/user" "get_keyring_secret" (func (param i64) (result i64)))
  (memory (export "memory") 1)
  (func (export "call") (result i32) (i32.const 0)))
