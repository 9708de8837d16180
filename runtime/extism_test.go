package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/abi"
)

var (
	extismOnce sync.Once
	extismMod  *Module
	extismErr  error
)

// hostileExtism compiles testdata/extism/hostile.wasm (built by
// testdata/extism/build.sh) once per test binary.
func hostileExtism(t testing.TB) *Module {
	t.Helper()
	extismOnce.Do(func() {
		wasm, err := os.ReadFile("../testdata/extism/hostile.wasm")
		if err != nil {
			extismErr = err
			return
		}
		extismMod, extismErr = testEngine.Compile(context.Background(), "hostile-extism", wasm)
	})
	if extismErr != nil {
		t.Fatal(extismErr)
	}
	return extismMod
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
		status, out, err := p.CallExport(context.Background(), "probe", nil, &fakeHost{})
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
			status, out, err := p.CallExport(ctx, tc.export, []byte(tc.input), &fakeHost{})
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

// TestExtismKernelBounded: the kernel arena stops at Limits.Memory and
// vars at their bound.
func TestExtismKernelBounded(t *testing.T) {
	p := extismPool(t, Limits{Memory: 8 << 20})
	status, out, err := p.CallExport(context.Background(), "fill", nil, &fakeHost{})
	if err != nil || status != abi.StatusOK || len(out) != 8 {
		t.Fatalf("fill = %d %q %v", status, out, err)
	}
	if n := binary.LittleEndian.Uint64(out); n == 0 || n > 8 {
		t.Fatalf("fill allocated %d MiB blocks under an 8 MiB limit", n)
	}
	status, out, err = p.CallExport(context.Background(), "vars", nil, &fakeHost{})
	if err != nil || status != abi.StatusOK || len(out) != 8 {
		t.Fatalf("vars = %d %q %v", status, out, err)
	}
	if n := binary.LittleEndian.Uint64(out); n == 0 || n > 16 {
		t.Fatalf("%d vars of 64 KiB landed, want 1..16 (bound 1 MiB)", n)
	}
}

func TestExtismDeadlineAndDenial(t *testing.T) {
	p := extismPool(t, Limits{Timeout: 200 * time.Millisecond})
	_, _, err := p.CallExport(context.Background(), "spin", nil, &fakeHost{})
	callErr(t, err, KindDeadline)
	h := &fakeHost{reply: map[string]fakeReply{abi.HostHTTPFetch: {errno: abi.ErrDenied}}}
	_, _, err = p.CallExport(context.Background(), "fetch", nil, h)
	e := callErr(t, err, KindTrap)
	if !strings.Contains(e.Message, "not granted") {
		t.Fatalf("message = %q", e.Message)
	}
	if len(h.calls) != 1 || !strings.HasPrefix(h.calls[0], abi.HostHTTPFetch+" ") || !strings.Contains(h.calls[0], `"url":"https://example.com/"`) {
		t.Fatalf("host calls = %q", h.calls)
	}
	// The pool still answers.
	if status, out, err := p.CallExport(context.Background(), "echo", []byte("x"), &fakeHost{}); err != nil || status != 0 || string(out) != "x" {
		t.Fatalf("echo after failures = %d %q %v", status, out, err)
	}
}

func TestExtismNotCallable(t *testing.T) {
	p := newPool(t, watGuest, Limits{}, Sandbox{})
	_, _, err := p.CallExport(context.Background(), "call", nil, &fakeHost{})
	callErr(t, err, KindBadModule)
}
