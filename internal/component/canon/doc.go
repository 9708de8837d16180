// Package canon implements the Component Model's canonical ABI: how the
// values of component-level types (bool, integers, floats, char, string,
// list, record, tuple, variant, enum, option, result, flags, own and
// borrow handles) are laid out in a core instance's linear memory and
// passed as core values, and how they are lifted into Go values and
// lowered back, as CanonicalABI.md defines it.
//
// The package knows nothing of the engine. A core instance is reached
// through Memory (a linear memory: Size, Read, Write, which wazero's
// api.Memory satisfies), Realloc (the canonical `realloc` option) and
// PostReturn; core values are uint64s encoded as wazero encodes them (an
// i32 zero-extended, an f32 as its bits). Func prepares a function type
// once (its layout and flat signature, see Flatten); a Call then does one
// invocation in either direction:
//
//   - calling an export (canon lift): LowerArgs, then the core call, then
//     LiftResults (which runs post-return);
//   - implementing an import (canon lower): LiftArgs, then the Go
//     function, then LowerResults, then End.
//
// Go values are the plain form package component defines (see its
// FromJSON and ToJSON), so that a tool call's arguments lower and its
// result lifts without a conversion: bool; int64 for s8 ... s64 and
// uint64 for u8 ... u64; float64 for f32 and f64 (NaNs canonicalised both
// ways); rune for char; string (always valid UTF-8 on the Go side); []any
// for lists and tuples; map[string]any for records; component.Case for a
// variant, the case name for an enum, nil or component.Some for an
// option, component.ResultValue for a result; the names set, in
// declaration order, for flags. Own and borrow handles, which have no
// plain form, are the resource's representation, a uint32. With
// Options.ByteLists a list<u8> lifts as a []byte, for host functions
// that move bytes. Lowering is lenient where that is unambiguous: any Go
// integer or integral float for an integer type (range-checked), []byte
// or a string for a list<u8>, a []any by position for a record, the case
// index for an enum, the name of a case without a payload for a variant,
// one bool per flag or an integer mask for flags, a one-rune string for a
// char.
//
// Hostile input gives an error wrapping ErrTrap, never a panic: every
// pointer and length is checked against the memory size (in 64-bit
// arithmetic), every realloc result for alignment and bounds, every
// discriminant, char and string encoding. What a lift may allocate on the
// Go side is bounded by Options.MaxLift, so a list of zero-sized elements
// or a long list of small ones cannot exhaust the host. As the spec says,
// a bool is true for any non-zero byte and the unused bits of a flags
// value are ignored.
package canon
