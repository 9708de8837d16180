package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// FuzzImportsViaGuest drives every wasmcp import with arbitrary pointers
// and lengths through guest.wat's fuzz op, the way a hostile plugin would:
// the host never panics, a bad range traps the guest cleanly (KindTrap) or,
// for call, returns an errno, and the pool keeps working.
func FuzzImportsViaGuest(f *testing.F) {
	for op := range byte(6) {
		f.Add(op, uint32(0), uint32(16), uint32(0), uint32(4))
		f.Add(op, uint32(0xfffffff0), uint32(64), uint32(0), uint32(0))
		f.Add(op, uint32(65530), uint32(0xffffffff), uint32(65535), uint32(1))
		f.Add(op, uint32(1024), uint32(100), uint32(0x7fffffff), uint32(0x80000000))
	}
	h := &fakeHost{reply: map[string]fakeReply{"": {[]byte(`{"ok":true}`), 0}}}
	p := newPool(f, watGuest, Limits{Instances: 1}, Sandbox{})
	f.Fuzz(func(t *testing.T, op byte, a, b, c, d uint32) {
		in := "F" + string([]byte{op % 6}) + le(a, b, c, d)
		_, out, err := p.Call(context.Background(), []byte(in), h, nil)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || (e.Kind != KindTrap && e.Kind != KindOutput) {
				t.Fatalf("op %d (%#x %#x %#x %#x): %v", op%6, a, b, c, d, err)
			}
			return
		}
		if op%6 == 3 && len(out) >= 4 {
			if r := int32(binary.LittleEndian.Uint32(out)); r < abi.ErrUnknown {
				t.Fatalf("call returned errno %d", r)
			}
		}
		if _, out, err := p.Call(context.Background(), []byte("e!"), nil, nil); err != nil || string(out) != "e!" {
			t.Fatalf("pool broken after fuzz call: %q, %v", out, err)
		}
	})
}

// FuzzImportsDirect calls the host functions directly on a live instance
// with arbitrary state (pending input and result) and arguments: they either
// return or panic with an *importTrap, which wazero turns into a trap.
func FuzzImportsDirect(f *testing.F) {
	f.Add(byte(0), 10, 5, uint64(0), uint64(16), uint64(0), uint64(0))
	f.Add(byte(1), 100, 0, uint64(0xfffffff0), uint64(64), uint64(0), uint64(0))
	f.Add(byte(4), 0, 100, uint64(131070), uint64(10), uint64(0), uint64(0))
	f.Add(byte(2), 0, 0, uint64(7), uint64(0), uint64(0xffffffff), uint64(0))
	f.Add(byte(3), 0, 0, uint64(0), uint64(4), uint64(131072), uint64(1))
	p := newPool(f, watGuest, Limits{}, Sandbox{})
	inst, err := p.newInstance(context.Background(), nil)
	if err != nil {
		f.Fatal(err)
	}
	defer inst.mod.Close(context.Background())
	fns := []api.GoModuleFunc{inputRead, outputWrite, logImport, callImport, resultRead, inputLen}
	h := &fakeHost{reply: map[string]fakeReply{}}
	f.Fuzz(func(t *testing.T, op byte, inLen, resLen int, a, b, c, d uint64) {
		inLen, resLen = clamp(inLen), clamp(resLen)
		inst.st.begin(make([]byte, inLen), h, 1<<16)
		inst.st.result = make([]byte, resLen)
		stack := []uint64{a, b, c, d}
		ctx := &callCtx{Context: context.Background(), st: &inst.st}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(*importTrap); !ok {
						t.Fatalf("op %d panicked with %v", op%6, r)
					}
				}
			}()
			fns[op%6](ctx, inst.mod, stack)
		}()
		inst.st.end()
	})
}

func clamp(n int) int {
	if n < 0 {
		n = -n
	}
	return n % (1 << 17)
}

func TestStateOutsideACall(t *testing.T) {
	st := stateOf(context.Background())
	if st == nil || len(st.input) != 0 || st.host != nil {
		t.Fatalf("stateOf(background) = %+v", st)
	}
	if got := internMethod([]byte("kv/get")); got != abi.HostKVGet {
		t.Errorf("internMethod = %q", got)
	}
	if got := internMethod([]byte("x/y")); got != "x/y" {
		t.Errorf("internMethod = %q", got)
	}
}
