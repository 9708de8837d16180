package canon

import (
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/component"
)

// ErrValue is wrapped by the errors of lowering a Go value that does not
// fit its type. It is not a trap: the mistake is the host's, and the
// guest is left as it was (but for memory its realloc gave).
var ErrValue = errors.New("the value does not fit the type")

// valueError describes a Go value that does not fit the type it is
// lowered as.
func valueError(t *component.Type, v any, why string) error {
	if why == "" {
		return fmt.Errorf("canon: cannot lower %T as %s: %w", v, t, ErrValue)
	}
	return fmt.Errorf("canon: cannot lower %T as %s: %s: %w", v, t, why, ErrValue)
}

// integer returns a Go integer, or an integral float, as a sign and a
// magnitude.
func integer(v any) (neg bool, mag uint64, ok bool) {
	var i int64
	switch x := v.(type) {
	case int:
		i = int64(x)
	case int8:
		i = int64(x)
	case int16:
		i = int64(x)
	case int32:
		i = int64(x)
	case int64:
		i = x
	case uint:
		return false, uint64(x), true
	case uint8:
		return false, uint64(x), true
	case uint16:
		return false, uint64(x), true
	case uint32:
		return false, uint64(x), true
	case uint64:
		return false, x, true
	case uintptr:
		return false, uint64(x), true
	case float32:
		return integer(float64(x))
	case float64:
		if x != math.Trunc(x) || x <= -(1<<64) || x >= 1<<64 {
			return false, 0, false
		}
		if x < 0 {
			return true, uint64(-x), true
		}
		return false, uint64(x), true
	default:
		return false, 0, false
	}
	if i < 0 {
		return true, uint64(-i), true // -MinInt64 wraps to 1<<63, its magnitude
	}
	return false, uint64(i), true
}

// toInt converts a Go number to an integer in [lo, hi] (lo < 0 <= hi).
func toInt(t *component.Type, v any, lo, hi int64) (int64, error) {
	neg, mag, ok := integer(v)
	switch {
	case !ok:
		return 0, valueError(t, v, "not an integer")
	case neg && mag > uint64(-(lo+1))+1, !neg && mag > uint64(hi):
		return 0, valueError(t, v, "out of range")
	case neg:
		return -int64(mag), nil
	}
	return int64(mag), nil
}

// toUint converts a Go number to an integer in [0, hi].
func toUint(t *component.Type, v any, hi uint64) (uint64, error) {
	neg, mag, ok := integer(v)
	switch {
	case !ok:
		return 0, valueError(t, v, "not an integer")
	case neg && mag != 0:
		return 0, valueError(t, v, "negative")
	case mag > hi:
		return 0, valueError(t, v, "out of range")
	}
	return mag, nil
}

// toFloat converts a Go number to a float64.
func toFloat(t *component.Type, v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	}
	neg, mag, ok := integer(v)
	switch {
	case !ok:
		return 0, valueError(t, v, "")
	case neg:
		return -float64(mag), nil
	}
	return float64(mag), nil
}

// toChar converts a rune, an integer or a one-rune string to a Unicode
// scalar value.
func toChar(t *component.Type, v any) (uint32, error) {
	if s, ok := v.(string); ok {
		c, n := utf8.DecodeRuneInString(s)
		if n == 0 || n != len(s) || c == utf8.RuneError && n == 1 {
			return 0, valueError(t, v, "not one character")
		}
		return uint32(c), nil
	}
	r, err := toUint(t, v, 0x10FFFF)
	if err != nil {
		return 0, err
	}
	if r >= 0xD800 && r <= 0xDFFF {
		return 0, valueError(t, v, "a surrogate is not a Unicode scalar value")
	}
	return uint32(r), nil
}

// Canonical NaNs, as the spec defines them.
const (
	canonicalNaN32 = 0x7fc00000
	canonicalNaN64 = 0x7ff8000000000000
)

func canon32(f float32) float32 {
	if f != f {
		return math.Float32frombits(canonicalNaN32)
	}
	return f
}

func canon64(f float64) float64 {
	if f != f {
		return math.Float64frombits(canonicalNaN64)
	}
	return f
}

// caseOf returns the case index and payload of a variant-like value: an
// enum's case name (or index), nil or Some for an option, a ResultValue,
// a Case (or the name of a case without a payload) for a variant.
func caseOf(l *layout, v any) (uint32, any, error) {
	t := l.t
	var c uint32
	var payload any
	switch x := v.(type) {
	case nil:
		if t.Kind != component.Option {
			return 0, nil, valueError(t, v, "")
		}
		return 0, nil, nil
	case component.Some:
		if t.Kind != component.Option {
			return 0, nil, valueError(t, v, "")
		}
		return 1, x.Value, nil
	case component.ResultValue:
		if t.Kind != component.Result {
			return 0, nil, valueError(t, v, "")
		}
		if x.Err {
			c = 1
		}
		payload = x.Value
	case component.Case:
		i, ok := l.names[x.Name]
		if !ok || t.Kind != component.Variant {
			return 0, nil, valueError(t, v, fmt.Sprintf("no case %q", x.Name))
		}
		c, payload = i, x.Value
	case string:
		i, ok := l.names[x]
		if !ok || t.Kind == component.Flags {
			return 0, nil, valueError(t, v, fmt.Sprintf("no case %q", x))
		}
		c = i
	default:
		if t.Kind != component.Enum {
			return 0, nil, valueError(t, v, "")
		}
		u, err := toUint(t, v, uint64(l.ncases-1))
		return uint32(u), nil, err
	}
	if l.cases[c] == nil && payload != nil {
		return 0, nil, valueError(t, v, fmt.Sprintf("case %d has no payload", c))
	}
	return c, payload, nil
}

// flagsOf returns the flags value v as 32-bit words: the names of the
// flags set (a []string, or a []any of strings), one bool per flag (a
// []bool, or a []any of bools), or an integer mask.
func flagsOf(l *layout, v any) ([]uint32, error) {
	t := l.t
	words := make([]uint32, (l.nflags+31)/32)
	set := func(e any, i int) error {
		switch x := e.(type) {
		case string:
			j, ok := l.names[x]
			if !ok {
				return valueError(t, v, fmt.Sprintf("no flag %q", x))
			}
			words[j/32] |= 1 << (j % 32)
		case bool:
			if i >= l.nflags {
				return valueError(t, v, fmt.Sprintf("more than %d flags", l.nflags))
			}
			if x {
				words[i/32] |= 1 << (i % 32)
			}
		default:
			return valueError(t, v, "a flag is neither a name nor a bool")
		}
		return nil
	}
	switch x := v.(type) {
	case []string:
		for i, e := range x {
			if err := set(e, i); err != nil {
				return nil, err
			}
		}
	case []bool:
		if len(x) != l.nflags {
			return nil, valueError(t, v, fmt.Sprintf("%d flags, want %d", len(x), l.nflags))
		}
		for i, e := range x {
			if err := set(e, i); err != nil {
				return nil, err
			}
		}
	case []any:
		for i, e := range x {
			if err := set(e, i); err != nil {
				return nil, err
			}
		}
	default:
		if l.nflags > 64 {
			return nil, valueError(t, v, "")
		}
		hi := uint64(math.MaxUint64)
		if l.nflags < 64 {
			hi = 1<<l.nflags - 1
		}
		m, err := toUint(t, v, hi)
		if err != nil {
			return nil, err
		}
		for i := range words {
			words[i] = uint32(m >> (32 * i))
		}
	}
	return words, nil
}

// fieldsOf returns the members of a record or tuple value in order.
func fieldsOf(l *layout, v any) ([]any, error) {
	t := l.t
	switch x := v.(type) {
	case []any:
		if len(x) != len(l.fields) {
			return nil, valueError(t, v, fmt.Sprintf("%d members, want %d", len(x), len(l.fields)))
		}
		return x, nil
	case map[string]any:
		if t.Kind != component.Record {
			break
		}
		if len(x) != len(t.Fields) {
			return nil, valueError(t, v, fmt.Sprintf("%d fields, want %d", len(x), len(t.Fields)))
		}
		out := make([]any, len(t.Fields))
		for i, f := range t.Fields {
			e, ok := x[f.Name]
			if !ok {
				return nil, valueError(t, v, fmt.Sprintf("field %q missing", f.Name))
			}
			out[i] = e
		}
		return out, nil
	}
	return nil, valueError(t, v, "")
}
