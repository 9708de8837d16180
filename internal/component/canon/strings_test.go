package canon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/component"
)

// TestLowerStringGolden checks the bytes, the tagged length and the
// sequence of realloc calls of each encoding (store_string_copy,
// store_utf8_to_utf16 and store_string_to_latin1_or_utf16 in the spec).
func TestLowerStringGolden(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		enc   component.Encoding
		s     string
		bytes []byte
		units uint32
		calls string
	}{
		{component.UTF8, "hé", []byte("hé"), 3, "[realloc(0,0,1,3)]"},
		{component.UTF8, "", nil, 0, "[realloc(0,0,1,0)]"},
		{component.UTF16, "hé", []byte{'h', 0, 0xe9, 0}, 2, "[realloc(0,0,2,6) realloc(8,6,2,4)]"},
		{component.UTF16, "😀", []byte{0x3d, 0xd8, 0x00, 0xde}, 2, "[realloc(0,0,2,8) realloc(8,8,2,4)]"},
		{component.UTF16, "", nil, 0, "[realloc(0,0,2,0)]"},
		{component.Latin1UTF16, "hi", []byte("hi"), 2, "[realloc(0,0,2,2)]"},
		{component.Latin1UTF16, "hé", []byte{'h', 0xe9}, 2, "[realloc(0,0,2,3) realloc(8,3,2,2)]"},
		{component.Latin1UTF16, "h€", []byte{'h', 0, 0xac, 0x20}, 2 | utf16Tag, "[realloc(0,0,2,4) realloc(8,4,2,8) realloc(12,8,2,4)]"},
		{component.Latin1UTF16, "", nil, 0, "[realloc(0,0,2,0)]"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%q", tc.enc, tc.s), func(t *testing.T) {
			e := newEnv(1<<12, tc.enc)
			f, _ := NewFunc(fn(nil, tString))
			flat, err := f.NewCall(e.opts).LowerArgs(ctx, []any{tc.s})
			if err != nil {
				t.Fatal(err)
			}
			ptr, units := uint32(flat[0]), uint32(flat[1])
			n := units &^ utf16Tag
			if tc.enc == component.UTF16 || units&utf16Tag != 0 {
				n *= 2
			}
			got := e.mem.b[ptr : ptr+n]
			if units != tc.units || !bytes.Equal(got, tc.bytes) && len(tc.bytes)+len(got) > 0 {
				t.Fatalf("units %#x bytes % x, want %#x % x", units, got, tc.units, tc.bytes)
			}
			if calls := fmt.Sprint(e.alloc.calls); calls != tc.calls {
				t.Fatalf("calls %s, want %s", calls, tc.calls)
			}
			back, err := f.NewCall(e.opts).LiftArgs(ctx, flat)
			if err != nil || back[0] != tc.s {
				t.Fatalf("lifted %q, %v", back, err)
			}
		})
	}
}

// TestLiftStringInvalid checks that a string that is not valid in its
// encoding is a trap.
func TestLiftStringInvalid(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		enc   component.Encoding
		bytes []byte
		units uint32
	}{
		{"utf8 bad byte", component.UTF8, []byte{'a', 0xff}, 2},
		{"utf8 truncated", component.UTF8, []byte{0xe2, 0x82}, 2},
		{"utf8 surrogate", component.UTF8, []byte{0xed, 0xa0, 0x80}, 3},
		{"utf8 overlong", component.UTF8, []byte{0xc0, 0x80}, 2},
		{"utf16 lone high", component.UTF16, []byte{0x3d, 0xd8, 'a', 0}, 2},
		{"utf16 lone high at end", component.UTF16, []byte{'a', 0, 0x3d, 0xd8}, 2},
		{"utf16 lone low", component.UTF16, []byte{0x00, 0xde}, 1},
		{"latin1+utf16 tagged lone low", component.Latin1UTF16, []byte{0x00, 0xde}, 1 | utf16Tag},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(1<<12, tc.enc)
			copy(e.mem.b[64:], tc.bytes)
			f, _ := NewFunc(fn(nil, tString))
			_, err := f.NewCall(e.opts).LiftArgs(ctx, []uint64{64, uint64(tc.units)})
			if !errors.Is(err, ErrTrap) {
				t.Fatalf("lifted an invalid string: %v", err)
			}
		})
	}
	// Latin-1 has no invalid bytes: every byte is its code point.
	e := newEnv(1<<12, component.Latin1UTF16)
	copy(e.mem.b[64:], []byte{0xff, 'a'})
	f, _ := NewFunc(fn(nil, tString))
	got, err := f.NewCall(e.opts).LiftArgs(ctx, []uint64{64, 2})
	if err != nil || got[0] != "ÿa" {
		t.Fatalf("latin1: %q %v", got, err)
	}
}

// TestLowerStringLarge checks a long string in each encoding, through a
// realloc that moves the block when it shrinks.
func TestLowerStringLarge(t *testing.T) {
	ctx := context.Background()
	s := strings.Repeat("añ€😀", 1000)
	for _, enc := range []component.Encoding{component.UTF8, component.UTF16, component.Latin1UTF16} {
		e := newEnv(1<<16, enc)
		f, _ := NewFunc(fn(nil, tString))
		flat, err := f.NewCall(e.opts).LowerArgs(ctx, []any{s})
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.NewCall(e.opts).LiftArgs(ctx, flat)
		if err != nil || got[0] != s {
			t.Fatalf("%s: %v", enc, err)
		}
	}
}
