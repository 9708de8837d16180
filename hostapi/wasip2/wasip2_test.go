package wasip2

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	cm "github.com/wasmcp/wasmcp/internal/component"
)

// lines collects what a log stream writes, one element per Write.
type lines struct{ got []string }

func (l *lines) Write(b []byte) (int, error) {
	l.got = append(l.got, string(b))
	return len(b), nil
}

// call calls host function name (unversioned) with st in the context.
func call(ctx context.Context, st *State, name string, args ...any) (any, error) {
	f := Funcs()[name]
	if f == nil {
		return nil, fmt.Errorf("no host function %s", name)
	}
	return f(context.WithValue(ctx, stateKey{}, st), args)
}

// mustCall calls host function name, failing the test on an error or on
// a result that does not fit the function's WIT type.
func mustCall(t *testing.T, st *State, name string, args ...any) any {
	t.Helper()
	v, err := call(context.Background(), st, name, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	checkResult(t, name, v)
	return v
}

func isOK(v any) bool {
	r, ok := v.(cm.ResultValue)
	return ok && !r.Err
}

const (
	stdout = "wasi:cli/stdout#get-stdout"
	write  = "wasi:io/streams#[method]output-stream.write"
	bwf    = "wasi:io/streams#[method]output-stream.blocking-write-and-flush"
)

func TestStdoutLines(t *testing.T) {
	var out, errs lines
	st := New(Options{Stdout: &out, Stderr: &errs, Limits: Limits{LogLines: 4, LogLineText: 8}})
	WithState(context.Background(), st)
	h := mustCall(t, st, stdout)
	h2 := mustCall(t, st, stdout) // a second handle on the same stream
	if h == h2 {
		t.Fatal("two get-stdout calls gave one handle")
	}
	for _, w := range []struct {
		h any
		s string
	}{{h, "a\nb"}, {h2, "c\r\n"}, {h, "0123456789abc"}, {h, "def\nx\n"}, {h, "dropped\n"}} {
		if v := mustCall(t, st, write, w.h, []byte(w.s)); !isOK(v) {
			t.Fatalf("write %q: %v", w.s, v)
		}
	}
	if want := []string{"a", "bc", "01234567", "x"}; !slices.Equal(out.got, want) {
		t.Fatalf("stdout lines %q, want %q", out.got, want)
	}
	if d := st.Dropped(); d != int64(len("89abcdef")+len("dropped")) {
		t.Fatalf("dropped %d bytes", d)
	}
	// A new call has its own line budget; Close writes the last partial line.
	WithState(context.Background(), st)
	e := mustCall(t, st, "wasi:cli/stderr#get-stderr")
	mustCall(t, st, bwf, e, []byte("late"))
	mustCall(t, st, bwf, h, []byte("next\n"))
	if len(errs.got) != 0 || out.got[len(out.got)-1] != "next" {
		t.Fatalf("stdout %q, stderr %q", out.got, errs.got)
	}
	st.Close()
	if !slices.Equal(errs.got, []string{"late"}) {
		t.Fatalf("stderr %q after Close", errs.got)
	}
}

func TestStreamBadInput(t *testing.T) {
	ctx := context.Background()
	st := New(Options{Limits: Limits{MaxWrite: 16}})
	defer st.Close()
	h := mustCall(t, st, stdout)
	in := mustCall(t, st, "wasi:cli/stdin#get-stdin")
	cases := []struct {
		name string
		args []any
	}{
		{write, []any{h, make([]byte, 17)}},       // over the permit
		{bwf, []any{h, make([]byte, 1<<20)}},      // far over it
		{write, []any{uint32(9999), []byte("x")}}, // not live
		{write, []any{in, []byte("x")}},           // an input stream as an output stream
		{write, []any{h}},                         // too few arguments
		{write, []any{h, "text"}},                 // not a list<u8>
		{write, []any{h, []any{uint64(300)}}},     // not a u8
		{"wasi:io/streams#[method]output-stream.write-zeroes", []any{h, uint64(1) << 62}},
		{"wasi:io/poll#poll", []any{[]any{}}},   // empty poll
		{"wasi:io/poll#poll", []any{[]any{in}}}, // not a pollable
		{"wasi:io/poll#poll", []any{"x"}},
		{"wasi:random/random#get-random-bytes", []any{uint64(1) << 40}},
		{"wasi:io/error#[method]error.to-debug-string", []any{h}},
	}
	for _, c := range cases {
		if v, err := call(ctx, st, c.name, c.args...); err == nil {
			t.Errorf("%s%v = %v, want an error", c.name, c.args, v)
		} else if strings.Contains(err.Error(), "host function failed") {
			t.Errorf("%s%v panicked: %v", c.name, c.args, err)
		}
	}
	if _, err := Funcs()[stdout](ctx, nil); !errors.Is(err, errNoState) {
		t.Fatalf("a call without a state: %v", err)
	}
	if err := st.Drop(ctx, &cm.ResourceType{Name: "pollable"}, 4242); err == nil {
		t.Fatal("drop of a dead representation accepted")
	}
	if err := st.Drop(ctx, &cm.ResourceType{Name: "output-stream"}, h.(uint32)); err != nil {
		t.Fatal(err)
	}
	if _, err := call(ctx, st, write, h, []byte("x")); err == nil {
		t.Fatal("write on a dropped stream accepted")
	}
	// Reads are bounded, and stdin is at its end.
	v := mustCall(t, st, "wasi:io/streams#[method]input-stream.blocking-read", in, uint64(1)<<60)
	if r := v.(cm.ResultValue); !r.Err || r.Value != (cm.Case{Name: "closed"}) {
		t.Fatalf("stdin read: %#v", v)
	}
}

func TestResourceLimit(t *testing.T) {
	st := New(Options{Limits: Limits{MaxResources: 3}})
	for range 3 {
		mustCall(t, st, stdout)
	}
	if _, err := call(context.Background(), st, stdout); err == nil {
		t.Fatal("a fourth resource was made over MaxResources 3")
	}
	if st.Live() != 3 {
		t.Fatalf("%d live", st.Live())
	}
	st.Close()
	if _, err := call(context.Background(), st, stdout); err == nil {
		t.Fatal("a resource was made on a closed state")
	}
}

func TestPollAndClocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := New(Options{Now: func() time.Time { return time.Unix(1700000000, 5) }})
		defer st.Close()
		ctx := context.WithValue(context.Background(), stateKey{}, st)
		now := func() uint64 { return mustCall(t, st, "wasi:clocks/monotonic-clock#now").(uint64) }
		if dt := mustCall(t, st, "wasi:clocks/wall-clock#now").(map[string]any); dt["seconds"] != uint64(1700000000) || dt["nanoseconds"] != uint64(5) {
			t.Fatalf("wall clock %v", dt)
		}
		t0 := now()
		short := mustCall(t, st, "wasi:clocks/monotonic-clock#subscribe-duration", uint64(10*time.Millisecond))
		long := mustCall(t, st, "wasi:clocks/monotonic-clock#subscribe-instant", t0+uint64(time.Hour))
		if mustCall(t, st, "wasi:io/poll#[method]pollable.ready", short) != false {
			t.Fatal("a 10ms timer ready at once")
		}
		got := mustCall(t, st, "wasi:io/poll#poll", []any{long, short})
		if !slices.Equal(got.([]any), []any{uint64(1)}) {
			t.Fatalf("poll = %v, want [1]", got)
		}
		if d := now() - t0; d != uint64(10*time.Millisecond) {
			t.Fatalf("poll took %v", time.Duration(d))
		}
		mustCall(t, st, "wasi:io/poll#[method]pollable.block", long)
		if d := now() - t0; d != uint64(time.Hour) {
			t.Fatalf("block took %v", time.Duration(d))
		}
		// A wait past the call's deadline ends with the call.
		never := mustCall(t, st, "wasi:clocks/monotonic-clock#subscribe-duration", ^uint64(0))
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if _, err := Funcs()["wasi:io/poll#[method]pollable.block"](dctx, []any{never}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("block past the deadline: %v", err)
		}
		// Streams' pollables are ready.
		p := mustCall(t, st, "wasi:io/streams#[method]output-stream.subscribe", mustCall(t, st, stdout))
		if mustCall(t, st, "wasi:io/poll#[method]pollable.ready", p) != true {
			t.Fatal("stdout not ready")
		}
	})
}

func TestRandom(t *testing.T) {
	src := bytes.Repeat([]byte{7}, 64)
	st := New(Options{Random: bytes.NewReader(src), InsecureSeed: [2]uint64{1, 2}})
	if b := mustCall(t, st, "wasi:random/random#get-random-bytes", uint64(5)); !bytes.Equal(b.([]byte), src[:5]) {
		t.Fatalf("random bytes %v", b)
	}
	if u := mustCall(t, st, "wasi:random/random#get-random-u64"); u != uint64(0x0707070707070707) {
		t.Fatalf("random u64 %#x", u)
	}
	if s := mustCall(t, st, "wasi:random/insecure-seed#insecure-seed"); !slices.Equal(s.([]any), []any{uint64(1), uint64(2)}) {
		t.Fatalf("seed %v", s)
	}
	// insecure is a function of the seed.
	st2 := New(Options{InsecureSeed: [2]uint64{1, 2}})
	a := mustCall(t, st, "wasi:random/insecure#get-insecure-random-bytes", uint64(16))
	b := mustCall(t, st2, "wasi:random/insecure#get-insecure-random-bytes", uint64(16))
	if !bytes.Equal(a.([]byte), b.([]byte)) {
		t.Fatal("same seed, different insecure bytes")
	}
	if mustCall(t, st, "wasi:random/insecure#get-insecure-random-u64") == mustCall(t, st, "wasi:random/insecure#get-insecure-random-u64") {
		t.Fatal("insecure u64 repeats")
	}
	// An exhausted source is an error, not short bytes.
	if _, err := call(context.Background(), New(Options{Random: bytes.NewReader(nil), InsecureSeed: [2]uint64{1, 1}}), "wasi:random/random#get-random-u64"); err == nil {
		t.Fatal("empty random source gave a value")
	}
}

func TestCLI(t *testing.T) {
	st := New(Options{Env: map[string]string{"B": "2", "A": "1"}, Args: []string{"prog", "x"}})
	if env := mustCall(t, st, "wasi:cli/environment#get-environment"); fmt.Sprint(env) != "[[A 1] [B 2]]" {
		t.Fatalf("environment %v", env)
	}
	if args := mustCall(t, st, "wasi:cli/environment#get-arguments"); fmt.Sprint(args) != "[prog x]" {
		t.Fatalf("arguments %v", args)
	}
	for _, name := range []string{"wasi:cli/environment#initial-cwd", "wasi:cli/terminal-stdin#get-terminal-stdin",
		"wasi:cli/terminal-stdout#get-terminal-stdout", "wasi:cli/terminal-stderr#get-terminal-stderr"} {
		if v := mustCall(t, st, name); v != nil {
			t.Errorf("%s = %v, want none", name, v)
		}
	}
	for _, c := range []struct {
		name string
		arg  any
		code int
	}{
		{"wasi:cli/exit#exit", cm.ResultValue{}, 0},
		{"wasi:cli/exit#exit", cm.ResultValue{Err: true}, 1},
		{"wasi:cli/exit#exit-with-code", uint64(3), 3},
	} {
		_, err := call(context.Background(), st, c.name, c.arg)
		var exit *ExitError
		if !errors.As(err, &exit) || exit.Code != c.code {
			t.Errorf("%s(%v): %v, want exit %d", c.name, c.arg, err, c.code)
		}
	}
	if st2 := New(Options{}); fmt.Sprint(mustCall(t, st2, "wasi:cli/environment#get-environment")) != "[]" {
		t.Fatal("the zero Options have an environment")
	}
}

func TestSocketsDenied(t *testing.T) {
	st := New(Options{})
	n := mustCall(t, st, "wasi:sockets/instance-network#instance-network")
	for _, c := range []struct {
		name string
		args []any
	}{
		{"wasi:sockets/tcp-create-socket#create-tcp-socket", []any{"ipv4"}},
		{"wasi:sockets/udp-create-socket#create-udp-socket", []any{"ipv6"}},
		{"wasi:sockets/ip-name-lookup#resolve-addresses", []any{n, "example.com"}},
	} {
		if v := mustCall(t, st, c.name, c.args...); v != fail("access-denied") {
			t.Errorf("%s = %#v, want access-denied", c.name, v)
		}
	}
	for _, name := range socketMethods {
		if _, err := call(context.Background(), st, name, n); err == nil {
			t.Errorf("%s on a network handle did not trap", name)
		}
	}
	if _, err := call(context.Background(), st, "wasi:sockets/ip-name-lookup#resolve-addresses", mustCall(t, st, stdout), "x"); err == nil {
		t.Error("resolve-addresses on a stream handle did not trap")
	}
}

func TestConfigStore(t *testing.T) {
	st := New(Options{Config: map[string]string{"region": "eu", "api_url": "https://x.test"}})
	if v := mustCall(t, st, "wasi:config/store#get", "region"); v != ok(cm.Some{Value: "eu"}) {
		t.Fatalf("get region = %#v", v)
	}
	if v := mustCall(t, st, "wasi:config/store#get", "nope"); v != ok(nil) {
		t.Fatalf("get nope = %#v", v)
	}
	if v := mustCall(t, st, "wasi:config/store#get-all"); fmt.Sprint(v) != "{false [[api_url https://x.test] [region eu]]}" {
		t.Fatalf("get-all = %v", v)
	}
	if v := mustCall(t, New(Options{}), "wasi:config/store#get-all"); fmt.Sprint(v) != "{false []}" {
		t.Fatalf("get-all with no config = %v", v)
	}
}
