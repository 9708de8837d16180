package canon

import (
	"context"
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/component"
)

// utf16Tag marks a latin1+utf16 string length as counting UTF-16 code
// units rather than Latin-1 bytes.
const utf16Tag = 1 << 31

// maxStringBytes is the spec's MAX_STRING_BYTE_LENGTH.
const maxStringBytes = 1<<31 - 1

// string lifts the string at ptr with the given (tagged) length in code
// units, decoding it from the guest's encoding; a string that is not
// valid in its encoding is a trap.
func (r *lifter) string(ptr, units uint32) (string, error) {
	enc := r.c.o.Encoding
	utf16Units := enc == component.UTF16
	if enc == component.Latin1UTF16 && units&utf16Tag != 0 {
		utf16Units = true
		units ^= utf16Tag
	}
	align := uint32(1)
	if enc != component.UTF8 {
		align = 2
	}
	n := uint64(units)
	if utf16Units {
		n *= 2
	}
	b, err := r.region(ptr, n, align)
	if err != nil {
		return "", err
	}
	switch {
	case enc == component.UTF8:
		if err := r.charge(16 + n); err != nil {
			return "", err
		}
		if !utf8.Valid(b) {
			return "", trapf("string at %#x is not valid UTF-8", ptr)
		}
		return string(b), nil
	case utf16Units:
		// At most 3 UTF-8 bytes per UTF-16 code unit.
		if err := r.charge(16 + 3*uint64(units)); err != nil {
			return "", err
		}
		out := make([]byte, 0, units)
		for i := 0; i < len(b); i += 2 {
			u := rune(binary.LittleEndian.Uint16(b[i:]))
			switch {
			case u >= 0xD800 && u < 0xDC00:
				if i+3 >= len(b) {
					return "", trapf("string at %#x ends in an unpaired surrogate", ptr)
				}
				lo := rune(binary.LittleEndian.Uint16(b[i+2:]))
				if lo < 0xDC00 || lo > 0xDFFF {
					return "", trapf("string at %#x has an unpaired surrogate", ptr)
				}
				u = utf16.DecodeRune(u, lo)
				i += 2
			case u >= 0xDC00 && u <= 0xDFFF:
				return "", trapf("string at %#x has an unpaired surrogate", ptr)
			}
			out = utf8.AppendRune(out, u)
		}
		return string(out), nil
	default: // Latin-1
		if err := r.charge(16 + 2*n); err != nil {
			return "", err
		}
		out := make([]byte, 0, len(b))
		for _, c := range b {
			out = utf8.AppendRune(out, rune(c))
		}
		return string(out), nil
	}
}

// string lowers s (valid UTF-8) into the guest's encoding in memory
// allocated with realloc, following the spec's sequence of realloc calls
// (a worst-case allocation shrunk once the size is known), and returns
// its pointer and tagged length.
func (w *lowerer) string(ctx context.Context, s string) (uint32, uint32, error) {
	if !utf8.ValidString(s) {
		return 0, 0, valueError(component.Prim(component.String), s, "not valid UTF-8")
	}
	n := uint64(len(s))
	switch w.c.o.Encoding {
	case component.UTF8:
		if n > maxStringBytes {
			return 0, 0, trapf("string of %d bytes is too long", n)
		}
		ptr, err := w.alloc(ctx, 0, 0, 1, n)
		if err != nil {
			return 0, 0, err
		}
		if ws, ok := w.c.o.Memory.(interface{ WriteString(uint32, string) bool }); ok && n > 0 {
			// wazero's memory writes a string without a copy to a []byte.
			if !ws.WriteString(ptr, s) {
				return 0, 0, trapf("%d bytes at %#x are out of bounds", n, ptr)
			}
			return ptr, uint32(n), nil
		}
		return ptr, uint32(n), w.write(ptr, []byte(s))
	case component.UTF16:
		worst := 2 * n
		if worst > maxStringBytes {
			return 0, 0, trapf("string of %d bytes is too long", n)
		}
		ptr, err := w.alloc(ctx, 0, 0, 2, worst)
		if err != nil {
			return 0, 0, err
		}
		return w.utf16(ctx, ptr, worst, s)
	default: // latin1+utf16
		if n > maxStringBytes {
			return 0, 0, trapf("string of %d bytes is too long", n)
		}
		ptr, err := w.alloc(ctx, 0, 0, 2, n)
		if err != nil {
			return 0, 0, err
		}
		latin := make([]byte, 0, len(s))
		for _, c := range s {
			if c >= 1<<8 {
				latin = nil
				break
			}
			latin = append(latin, byte(c))
		}
		if latin == nil && n > 0 {
			worst := 2 * n
			if worst > maxStringBytes {
				return 0, 0, trapf("string of %d bytes is too long", n)
			}
			if ptr, err = w.alloc(ctx, ptr, uint32(n), 2, worst); err != nil {
				return 0, 0, err
			}
			ptr, units, err := w.utf16(ctx, ptr, worst, s)
			return ptr, units | utf16Tag, err
		}
		if err := w.write(ptr, latin); err != nil {
			return 0, 0, err
		}
		if uint64(len(latin)) < n {
			if ptr, err = w.alloc(ctx, ptr, uint32(n), 2, uint64(len(latin))); err != nil {
				return 0, 0, err
			}
		}
		return ptr, uint32(len(latin)), nil
	}
}

// utf16 writes s as UTF-16 into the worst-case block at ptr, shrinks the
// block to fit and returns it with the string's length in code units.
func (w *lowerer) utf16(ctx context.Context, ptr uint32, worst uint64, s string) (uint32, uint32, error) {
	enc := encodeUTF16(s)
	if err := w.write(ptr, enc); err != nil {
		return 0, 0, err
	}
	if uint64(len(enc)) < worst {
		var err error
		if ptr, err = w.alloc(ctx, ptr, uint32(worst), 2, uint64(len(enc))); err != nil {
			return 0, 0, err
		}
	}
	return ptr, uint32(len(enc) / 2), nil
}

// encodeUTF16 encodes s (valid UTF-8) as UTF-16LE.
func encodeUTF16(s string) []byte {
	out := make([]byte, 0, 2*len(s))
	for _, c := range s {
		if c >= 0x10000 {
			hi, lo := utf16.EncodeRune(c)
			out = binary.LittleEndian.AppendUint16(out, uint16(hi))
			out = binary.LittleEndian.AppendUint16(out, uint16(lo))
			continue
		}
		out = binary.LittleEndian.AppendUint16(out, uint16(c))
	}
	return out
}
