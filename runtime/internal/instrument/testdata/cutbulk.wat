;; cutbulk.wat: a bulk instruction just after a cut, for TestBulkAfterCut:
;; the loop's body is long enough to be cut at the end of its block, and
;; the cut takes the fuel down for the rest of the body (1,100 nops)
;; without testing it, so the charge of the table.grow that follows
;; starts from whatever that left, down to minus the rest of the body.
(module
  (memory 1)
  (table $t 0 funcref)
  (func (export "grow") (param $n i32)
    (loop $l
      (block $b nop)
      (drop (table.grow $t (ref.null func) (local.get $n)))
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop
      nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop nop)))
