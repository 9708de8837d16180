;; simd.wat: SIMD instructions of every immediate shape (memarg, lane,
;; memarg + lane, 16-byte constant and shuffle), inside a loop.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "\00\01\02\03\04\05\06\07\08\09\0a\0b\0c\0d\0e\0f\10\11\12\13\14\15\16\17\18\19\1a\1b\1c\1d\1e\1f")
  (func (export "simd") (param $n i32) (result i64)
    (local $v v128) (local $i i32)
    (local.set $v (v128.const i32x4 0x03030303 3 0x0303 -3))
    (loop $l
      (local.set $v
        (i32x4.add (local.get $v)
          (i8x16.shuffle 3 3 3 3 0 1 2 3 15 14 13 12 3 3 3 3
            (v128.load offset=3 (i32.const 0))
            (v128.load8_splat (i32.const 3)))))
      (local.set $v (i8x16.replace_lane 3 (local.get $v) (i32.const 3)))
      (local.set $v (v128.load32_lane 3 (i32.const 4) (local.get $v)))
      (v128.store32_lane 1 (i32.const 64) (local.get $v))
      (v128.store offset=80 (i32.const 0) (f32x4.demote_f64x2_zero (f64x2.promote_low_f32x4 (local.get $v))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (i64.add
      (i64x2.extract_lane 1 (i64x2.mul (local.get $v) (v128.load64_zero (i32.const 8))))
      (i64.extend_i32_u (i32.add (i8x16.extract_lane_u 3 (local.get $v))
                                 (i32.add (i32.load (i32.const 64)) (v128.any_true (local.get $v))))))))
