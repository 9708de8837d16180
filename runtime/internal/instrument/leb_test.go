package instrument

import (
	"errors"
	"testing"
)

func TestU32(t *testing.T) {
	tests := []struct {
		in   []byte
		want uint32
		n    int
		err  error
	}{
		{[]byte{0}, 0, 1, nil},
		{[]byte{0x7f}, 127, 1, nil},
		{[]byte{0x80, 0x01}, 128, 2, nil},
		{[]byte{0x80, 0x00}, 0, 2, nil}, // padded, allowed
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, 0xffffffff, 5, nil},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x1f}, 0, 5, errOverflow},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0, 5, errOverflow},
		{[]byte{0x80}, 0, 1, errEOF},
		{nil, 0, 0, errEOF},
	}
	for _, tt := range tests {
		v, n, err := u32(tt.in, 0)
		if !errors.Is(err, tt.err) || (err == nil && (v != tt.want || n != tt.n)) {
			t.Errorf("u32(%x) = %d, %d, %v; want %d, %d, %v", tt.in, v, n, err, tt.want, tt.n, tt.err)
		}
	}
	for _, v := range []uint32{0, 1, 127, 128, 300, 1 << 21, 1<<32 - 1} {
		b := appendU32(nil, v)
		if got, n, err := u32(b, 0); got != v || n != len(b) || err != nil {
			t.Errorf("round trip %d: %x → %d, %d, %v", v, b, got, n, err)
		}
	}
}

func TestS33(t *testing.T) {
	tests := []struct {
		in   []byte
		want int64
		err  error
	}{
		{[]byte{0x40}, -64, nil},
		{[]byte{0x7f}, -1, nil},
		{[]byte{0x6f}, -17, nil},
		{[]byte{0x00}, 0, nil},
		{[]byte{0x3f}, 63, nil},
		{[]byte{0xc0, 0x00}, 64, nil},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, 1<<32 - 1, nil},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x70}, -1 << 32, nil},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x1f}, 0, errOverflow}, // bit 32 set, bits 33–34 not
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x8f, 0x00}, 0, errOverflow},
		{[]byte{0xff}, 0, errEOF},
	}
	for _, tt := range tests {
		v, n, err := s33(tt.in, 0)
		if !errors.Is(err, tt.err) || (err == nil && (v != tt.want || n != len(tt.in))) {
			t.Errorf("s33(%x) = %d, %d, %v; want %d, %d, %v", tt.in, v, n, err, tt.want, len(tt.in), tt.err)
		}
	}
}

func TestSkipSigned(t *testing.T) {
	tests := []struct {
		in   []byte
		skip func([]byte, int) (int, error)
		n    int
		err  error
	}{
		{[]byte{0x7f}, skipS32, 1, nil},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x07}, skipS32, 5, nil}, // max int32
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x78}, skipS32, 5, nil}, // min int32
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, skipS32, 5, errOverflow},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x70}, skipS32, 5, errOverflow},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, skipS32, 5, errOverflow},
		{[]byte{0x80, 0x80}, skipS32, 2, errEOF},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}, skipS64, 10, nil}, // max int64
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, skipS64, 10, nil}, // min int64
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, skipS64, 10, errOverflow},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, skipS64, 10, errOverflow},
	}
	for _, tt := range tests {
		n, err := tt.skip(tt.in, 0)
		if !errors.Is(err, tt.err) || (err == nil && n != tt.n) {
			t.Errorf("skip(%x) = %d, %v; want %d, %v", tt.in, n, err, tt.n, tt.err)
		}
	}
}
