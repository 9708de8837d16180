package extism

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

func TestAllocBounds(t *testing.T) {
	cases := []struct {
		name  string
		limit uint64
		n     uint64
		ok    bool
	}{
		{"zero", 1 << 20, 0, false},
		{"one", 1 << 20, 1, true},
		{"at limit", 1 << 20, 1<<20 - blockCost, true},
		{"over limit", 1 << 20, 1 << 20, false},
		{"2^63", 1 << 20, 1 << 63, false},
		{"max", 1 << 20, math.MaxUint64, false},
		{"max with a huge limit", math.MaxUint64, math.MaxUint64, false},
		{"2^63 with a huge limit", math.MaxUint64, 1 << 63, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := &Kernel{Limit: tc.limit}
			h := k.Alloc(tc.n)
			if (h != 0) != tc.ok {
				t.Fatalf("Alloc(%d) = %d, want ok=%v", tc.n, h, tc.ok)
			}
			if tc.ok && k.Length(h) != tc.n {
				t.Fatalf("Length = %d, want %d", k.Length(h), tc.n)
			}
			if k.Used() > tc.limit {
				t.Fatalf("Used %d over Limit %d", k.Used(), tc.limit)
			}
		})
	}
}

func TestTinyBlocksBounded(t *testing.T) {
	k := &Kernel{Limit: 1 << 16}
	n := 0
	for k.Alloc(1) != 0 {
		n++
	}
	if max := (1 << 16) / (8 + blockCost); n > max || k.Used() > k.Limit {
		t.Fatalf("%d one-byte blocks (used %d) under a 64 KiB limit, want at most %d", n, k.Used(), max)
	}
}

func TestReuseAndReset(t *testing.T) {
	k := &Kernel{Limit: 1 << 20}
	a := k.AllocBytes([]byte("secret!!"))
	k.Free(a)
	b := k.Alloc(8)
	if b != a {
		t.Fatalf("freed block not reused: %d then %d", a, b)
	}
	if !bytes.Equal(k.Bytes(b), make([]byte, 8)) {
		t.Fatalf("reused block not zeroed: %q", k.Bytes(b))
	}
	k.SetVar([]byte("v"), []byte("kept"))
	k.Reset([]byte("in"))
	if k.Length(b) != 0 || k.LoadU8(b) != 0 || k.Used() != 0 {
		t.Fatal("Reset kept a block")
	}
	if string(k.Var([]byte("v"))) != "kept" || string(k.Input()) != "in" {
		t.Fatal("Reset lost the vars or the input")
	}
}

func TestVarsBounded(t *testing.T) {
	k := &Kernel{MaxVarBytes: 100}
	if !k.SetVar([]byte("a"), make([]byte, 60)) || k.SetVar([]byte("b"), make([]byte, 60)) {
		t.Fatal("second var should not fit")
	}
	if !k.SetVar([]byte("a"), make([]byte, 90)) { // replacing frees the old value first
		t.Fatal("replacement should fit")
	}
	k.SetVar([]byte("a"), nil)
	if k.VarBytes() != 0 || k.Var([]byte("a")) != nil {
		t.Fatalf("delete left %d bytes", k.VarBytes())
	}
}

func TestInputWords(t *testing.T) {
	k := &Kernel{}
	k.Reset([]byte("0123456789"))
	if got := k.InputLoadU64(8); got != uint64('8')|uint64('9')<<8 {
		t.Fatalf("tail word = %#x", got)
	}
	if k.InputLoadU64(10) != 0 || k.InputLoadU64(math.MaxUint64) != 0 || k.InputLoadU8(1<<63) != 0 {
		t.Fatal("past the input should read 0")
	}
}

// FuzzKernel runs arbitrary sequences of kernel calls with arbitrary
// handles and lengths against a model that tracks what each live block
// must hold: no call may panic, read or write outside its block, or pass
// the limit.
func FuzzKernel(f *testing.F) {
	f.Add([]byte{0, 16, 3, 0, 0, 1, 2, 8, 4, 1, 5, 0})
	f.Add(binary.LittleEndian.AppendUint64([]byte{0}, 1<<63))
	f.Add([]byte{0, 255, 0, 1, 6, 0, 7, 1, 0, 3, 2, 9, 9, 9})
	f.Fuzz(func(t *testing.T, prog []byte) {
		k := &Kernel{Limit: 1 << 16, MaxVarBytes: 1 << 10}
		model := map[uint64][]byte{} // live handle -> contents
		var handles []uint64
		next := func() byte {
			if len(prog) == 0 {
				return 0
			}
			b := prog[0]
			prog = prog[1:]
			return b
		}
		word := func() uint64 { // a handle: a known one nudged, or raw bytes
			sel := next()
			if sel < 128 && len(handles) > 0 {
				h := handles[int(sel)%len(handles)]
				return h + uint64(int64(int8(next())))
			}
			var w uint64
			for i := 0; i < int(sel%9); i++ {
				w = w<<8 | uint64(next())
			}
			return w
		}
		// inside reports the block and offset containing h in the model.
		inside := func(h, n uint64) ([]byte, uint64, bool) {
			for b, data := range model {
				if h >= b && h-b < uint64(len(data)) && n <= uint64(len(data))-(h-b) {
					return data, h - b, true
				}
			}
			return nil, 0, false
		}
		for len(prog) > 0 {
			switch next() % 10 {
			case 0:
				n := word()
				h := k.Alloc(n)
				if h != 0 {
					if _, ok := model[h]; ok {
						t.Fatalf("Alloc returned live handle %d", h)
					}
					model[h] = make([]byte, n)
					handles = append(handles, h)
				}
			case 1:
				h := word()
				k.Free(h)
				delete(model, h)
			case 2:
				h := word()
				want := uint64(0)
				if d, ok := model[h]; ok {
					want = uint64(len(d))
				}
				if got := k.Length(h); got != want {
					t.Fatalf("Length(%d) = %d, want %d", h, got, want)
				}
			case 3:
				h := word()
				var want uint64
				if d, off, ok := inside(h, 8); ok {
					want = binary.LittleEndian.Uint64(d[off:])
				}
				if got := k.LoadU64(h); got != want {
					t.Fatalf("LoadU64(%d) = %#x, want %#x", h, got, want)
				}
			case 4:
				h, v := word(), word()
				k.StoreU64(h, v)
				if d, off, ok := inside(h, 8); ok {
					binary.LittleEndian.PutUint64(d[off:], v)
				}
			case 5:
				h, v := word(), next()
				k.StoreU8(h, v)
				if d, off, ok := inside(h, 1); ok {
					d[off] = v
				}
			case 6:
				h := word()
				var want uint8
				if d, off, ok := inside(h, 1); ok {
					want = d[off]
				}
				if got := k.LoadU8(h); got != want {
					t.Fatalf("LoadU8(%d) = %d, want %d", h, got, want)
				}
			case 7:
				h, n := word(), word()
				got := k.Range(h, n)
				d, off, ok := inside(h, n)
				if ok != (got != nil) || ok && !bytes.Equal(got, d[off:off+n]) {
					t.Fatalf("Range(%d, %d) = %d bytes, want ok=%v", h, n, len(got), ok)
				}
			case 8:
				kh, vh := word(), word()
				if key := k.Bytes(kh); key != nil {
					if v := k.Bytes(vh); v != nil {
						k.SetVar(key, v)
					}
				}
				if k.VarBytes() > k.MaxVarBytes {
					t.Fatalf("vars hold %d bytes over %d", k.VarBytes(), k.MaxVarBytes)
				}
			case 9:
				k.Reset(nil)
				model = map[uint64][]byte{}
				handles = handles[:0]
			}
			if k.Used() > k.Limit {
				t.Fatalf("Used %d over Limit %d", k.Used(), k.Limit)
			}
		}
		for h, d := range model {
			if !bytes.Equal(k.Bytes(h), d) {
				t.Fatalf("block %d holds %x, want %x", h, k.Bytes(h), d)
			}
		}
	})
}

// TestHostileRanges: loads, stores and ranges that start in a block but
// run past its end, or start in padding, a freed block or nowhere, get 0
// or a no-op and leave the neighbour intact.
func TestHostileRanges(t *testing.T) {
	k := &Kernel{Limit: 1 << 20}
	a := k.Alloc(12) // 16 bytes reserved: 4 of padding
	b := k.AllocBytes([]byte("neighbour"))
	cases := []struct {
		name string
		h, n uint64
		ok   bool
	}{
		{"whole block", a, 12, true},
		{"tail", a + 4, 8, true},
		{"straddles the end", a + 8, 8, false},
		{"into the padding", a + 12, 1, false},
		{"huge length", a, math.MaxUint64, false},
		{"wrapping length", a + 1, math.MaxUint64 - a, false},
		{"null", 0, 1, false},
		{"below the first block", base - 1, 1, false},
		{"far away", 1 << 62, 8, false},
	}
	for _, tc := range cases {
		if got := k.Range(tc.h, tc.n); (got != nil) != tc.ok {
			t.Errorf("%s: Range(%d, %d) ok = %v, want %v", tc.name, tc.h, tc.n, got != nil, tc.ok)
		}
		if !tc.ok {
			k.StoreU64(tc.h, math.MaxUint64)
		}
	}
	k.StoreU8(a+12, 0xff) // padding
	if k.LoadU64(a+8) != 0 || k.LoadU8(a+12) != 0 {
		t.Error("a load past the block's end read something")
	}
	if string(k.Bytes(b)) != "neighbour" {
		t.Fatalf("neighbour = %q", k.Bytes(b))
	}
	k.Free(a)
	if k.Range(a, 1) != nil || k.LoadU8(a) != 0 {
		t.Error("a freed block is still readable")
	}
}
