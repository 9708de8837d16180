package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/runtime/internal/extism"
)

// hostileExtism is the repository's testdata/extism/hostile.wasm (built
// by testdata/extism/build.sh), compiled once per test binary.
func hostileExtism(t testing.TB) *Module {
	t.Helper()
	return fixture(t, "../../testdata/extism/hostile.wasm")
}

func extismPool(t testing.TB, l Limits) *Pool {
	t.Helper()
	p, err := hostileExtism(t).NewPool(l, Sandbox{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func TestExtismDetection(t *testing.T) {
	m := hostileExtism(t)
	if m.Mode() != Extism {
		t.Fatalf("mode = %v, want Extism", m.Mode())
	}
	got := strings.Join(m.ExtismExports(), " ")
	if strings.Contains(got, "takes_args") || !strings.Contains(got, "probe") {
		t.Fatalf("callable exports = %s", got)
	}
}

func TestExtismImportRefused(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"refused_user.wasm", "extism:host/user.get_keyring_secret"},
		{"refused_env.wasm", "extism:host/env.memory_bytes"},
		{"refused_sig.wasm", "extism:host/env.alloc has the wrong signature"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			wasm, err := os.ReadFile("../testdata/extism/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			_, err = testEngine.Compile(context.Background(), "bad", wasm)
			var ie *ImportError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want an ImportError naming %s", err, tc.want)
			}
		})
	}
}

// TestExtismHostileHandles: every hostile handle gets 0 or a no-op, and
// no store lands outside its block.
func TestExtismHostileHandles(t *testing.T) {
	p := extismPool(t, Limits{})
	for round := 0; round < 2; round++ { // the second runs on the reused instance
		status, out, err := p.CallExport(context.Background(), "probe", nil, &fakeHost{}, nil)
		if err != nil || status != abi.StatusOK || len(out) != 128 {
			t.Fatalf("probe = %d %q %v", status, out, err)
		}
		want := []uint64{0, 0, 0, 0x1111111111111111, 0, 0x0102030405060708, 0, 0, 0, 0, 0, 0, 0, 0, 8, 128}
		for i, w := range want {
			if got := binary.LittleEndian.Uint64(out[8*i:]); got != w {
				t.Errorf("round %d word %d = %#x, want %#x", round, i, got, w)
			}
		}
	}
}

// TestExtismOutsideCall: an Extism host function called with no kernel
// (outside an Extism call, as from a start function) answers 0, or
// get_log_level's constant, and changes nothing.
func TestExtismOutsideCall(t *testing.T) {
	for _, name := range sortedKeys(extismEnv) {
		f := extismEnv[name]
		s := []uint64{7, 7}
		f.fn(context.Background(), nil, s)
		want := uint64(0)
		switch {
		case name == "get_log_level":
			want = extismLogLevel
		case len(f.results) == 0:
			want = 7
		}
		if s[0] != want || s[1] != 7 {
			t.Errorf("%s: stack %v, want [%d 7]", name, s, want)
		}
	}
}

func TestExtismCalls(t *testing.T) {
	p := extismPool(t, Limits{MaxOutput: 64 << 10, Memory: 8 << 20})
	ctx := context.Background()
	cases := []struct {
		export string
		input  string
		status uint32
		out    string
		kind   Kind
	}{
		{export: "echo", input: "hello, extism kernel", out: "hello, extism kernel"},
		{export: "echo", input: "", out: ""},
		{export: "badout", out: ""},
		{export: "fail", status: abi.StatusError, out: "plugin function fail returned 3"},
		{export: "bigout", kind: KindOutput},
		{export: "crash", kind: KindTrap},
		{export: "nosuch", kind: KindBadModule},
		{export: "takes_args", kind: KindBadModule},
	}
	for _, tc := range cases {
		t.Run(tc.export, func(t *testing.T) {
			status, out, err := p.CallExport(ctx, tc.export, []byte(tc.input), &fakeHost{}, nil)
			if tc.kind != 0 {
				callErr(t, err, tc.kind)
				return
			}
			if err != nil || status != tc.status || string(out) != tc.out {
				t.Fatalf("%s = %d %q %v, want %d %q", tc.export, status, out, err, tc.status, tc.out)
			}
		})
	}
}

// TestExtismKernelBounded: the kernel arena stops at what the linear
// memory leaves of Limits.Memory, and vars at their bound.
func TestExtismKernelBounded(t *testing.T) {
	p := extismPool(t, Limits{Memory: 8 << 20})
	status, out, err := p.CallExport(context.Background(), "fill", nil, &fakeHost{}, nil)
	if err != nil || status != abi.StatusOK || len(out) != 8 {
		t.Fatalf("fill = %d %q %v", status, out, err)
	}
	if n := binary.LittleEndian.Uint64(out); n == 0 || n > 8 {
		t.Fatalf("fill allocated %d MiB blocks under an 8 MiB limit", n)
	}
	status, out, err = p.CallExport(context.Background(), "growfill", nil, &fakeHost{}, nil)
	if err != nil || status != abi.StatusOK || len(out) != 8 {
		t.Fatalf("growfill = %d %q %v", status, out, err)
	}
	if n := binary.LittleEndian.Uint64(out); n == 0 || n > 3 {
		t.Fatalf("after a 4 MiB linear memory, the kernel took %d MiB blocks of an 8 MiB limit", n)
	}
	status, out, err = p.CallExport(context.Background(), "vars", nil, &fakeHost{}, nil)
	if err != nil || status != abi.StatusOK || len(out) != 8 {
		t.Fatalf("vars = %d %q %v", status, out, err)
	}
	if n := binary.LittleEndian.Uint64(out); n == 0 || n > 16 {
		t.Fatalf("%d vars of 64 KiB landed, want 1..16 (bound 1 MiB)", n)
	}
}

func TestExtismDeadlineAndDenial(t *testing.T) {
	p := extismPool(t, Limits{Timeout: 200 * time.Millisecond})
	_, _, err := p.CallExport(context.Background(), "spin", nil, &fakeHost{}, nil)
	callErr(t, err, KindDeadline)
	h := &fakeHost{reply: map[string]fakeReply{abi.HostHTTPFetch: {errno: abi.ErrDenied}}}
	_, _, err = p.CallExport(context.Background(), "fetch", nil, h, nil)
	e := callErr(t, err, KindTrap)
	if !strings.Contains(e.Message, "not granted") {
		t.Fatalf("message = %q", e.Message)
	}
	if len(h.calls) != 1 || !strings.HasPrefix(h.calls[0], abi.HostHTTPFetch+" ") || !strings.Contains(h.calls[0], `"url":"https://example.com/"`) {
		t.Fatalf("host calls = %q", h.calls)
	}
	// The pool still answers.
	if status, out, err := p.CallExport(context.Background(), "echo", []byte("x"), &fakeHost{}, nil); err != nil || status != 0 || string(out) != "x" {
		t.Fatalf("echo after failures = %d %q %v", status, out, err)
	}
}

func TestExtismNotCallable(t *testing.T) {
	p := newPool(t, watGuest, Limits{}, Sandbox{})
	_, _, err := p.CallExport(context.Background(), "call", nil, &fakeHost{}, nil)
	callErr(t, err, KindBadModule)
}

// FuzzExtismHostFunctions calls the extism:host/env functions themselves
// (as wazero would) in arbitrary order with arbitrary handles, lengths and
// values, on a kernel bounded to 64 KiB: none may panic except with an
// import trap, the arena stays under its limit and the output under
// MaxOutput.
func FuzzExtismHostFunctions(f *testing.F) {
	f.Add([]byte{0, 1, 16, 9, 2, 0, 3, 4})
	f.Add([]byte{12, 255, 255, 255, 255, 255, 255, 255, 127, 5, 5})
	names := sortedKeys(extismEnv)
	f.Fuzz(func(t *testing.T, prog []byte) {
		st := &callState{maxOut: 1 << 10, host: &fakeHost{reply: map[string]fakeReply{
			abi.HostConfigGet: {result: []byte(`{"value":"v"}`)},
			abi.HostHTTPFetch: {result: []byte(`{"status":200,"headers":{"a":"b"},"body":"hi"}`)},
		}}}
		st.ext = &extismState{k: extism.Kernel{Limit: 1 << 16, MaxVarBytes: 1 << 10}, limit: 1 << 16}
		st.ext.k.Reset([]byte("the input"))
		ctx := &callCtx{Context: context.Background(), st: st}
		var last uint64
		next := func() uint64 {
			if len(prog) == 0 {
				return 0
			}
			b := prog[0]
			prog = prog[1:]
			switch b % 4 {
			case 0:
				return last + uint64(b>>2)
			case 1:
				return uint64(b >> 2)
			case 2:
				return 1 << (b >> 2 % 64)
			}
			var w uint64
			for i := 0; i < 8 && len(prog) > 0; i++ {
				w = w<<8 | uint64(prog[0])
				prog = prog[1:]
			}
			return w
		}
		for len(prog) > 0 {
			fn := extismEnv[names[int(prog[0])%len(names)]]
			prog = prog[1:]
			stack := []uint64{next(), next()}
			func() {
				defer func() {
					if r := recover(); r != nil {
						if _, ok := r.(*importTrap); !ok {
							t.Fatalf("panic %v", r)
						}
					}
				}()
				fn.fn(ctx, nil, stack)
			}()
			if len(fn.results) > 0 && stack[0] != 0 {
				last = stack[0]
			}
			if st.ext.k.Used() > st.ext.k.Limit || len(st.out) > st.maxOut || st.ext.k.VarBytes() > 1<<10 {
				t.Fatalf("bounds: used %d, out %d, vars %d", st.ext.k.Used(), len(st.out), st.ext.k.VarBytes())
			}
		}
	})
}

// countHost counts its calls by method and answers each with "{}".
type countHost struct{ calls map[string]int }

func (h *countHost) Log(context.Context, int32, []byte) {}
func (h *countHost) Call(_ context.Context, method string, _ []byte) ([]byte, int32) {
	h.calls[method]++
	return []byte("{}"), 0
}

// TestExtismUserTable: the extism:host/user functions are those of
// Config.ExtismUser, with the signatures it gives, each calling the Host
// with its own name; a table with an empty or repeated name is refused.
func TestExtismUserTable(t *testing.T) {
	ctx := context.Background()
	refused, err := os.ReadFile("../testdata/extism/refused_user.wasm")
	if err != nil {
		t.Fatal(err)
	}
	greedy, err := os.ReadFile("../testdata/extism/greedy.wasm")
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(ctx, Config{NoCache: true, ExtismUser: []ExtismFunction{
		{Name: "get_keyring_secret", Param: true},
		{Name: "create_elicitation", Param: true, Result: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	// refused_user imports get_keyring_secret with a result, the table
	// has none.
	if _, err := e.Compile(ctx, "sig", refused); err == nil || !strings.Contains(err.Error(), "extism:host/user.get_keyring_secret has the wrong signature") {
		t.Fatalf("compile refused_user = %v, want a wrong signature", err)
	}
	if _, err := testEngine.Compile(ctx, "greedy", greedy); err == nil || !strings.Contains(err.Error(), "extism:host/user.create_elicitation") {
		t.Fatalf("compile greedy without a table = %v, want an ImportError naming create_elicitation", err)
	}
	m, err := e.Compile(ctx, "greedy", greedy)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.NewPool(Limits{Instances: 1}, Sandbox{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	h := &countHost{calls: map[string]int{}}
	if _, _, err := p.CallExport(ctx, "call_tool", []byte(`{"name":"deny"}`), h, nil); err != nil {
		t.Fatal(err)
	}
	if len(h.calls) != 1 || h.calls["create_elicitation"] != 100_000 {
		t.Fatalf("host calls = %v, want create_elicitation 100000 times", h.calls)
	}
	for _, bad := range [][]ExtismFunction{{{Name: ""}}, {{Name: "a"}, {Name: "a", Result: true}}} {
		if e, err := NewEngine(ctx, Config{NoCache: true, ExtismUser: bad}); err == nil {
			_ = e.Close(ctx)
			t.Errorf("NewEngine(ExtismUser %v) did not fail", bad)
		}
	}
}
