package runtime

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

func TestCallEcho(t *testing.T) {
	p := newPool(t, watGuest, Limits{}, Sandbox{})
	for i := range 3 {
		in := []byte(fmt.Sprintf("e hello %d", i))
		status, out, err := p.Call(context.Background(), in, nil, nil)
		if err != nil || status != abi.StatusOK || !bytes.Equal(out, in) {
			t.Fatalf("Call = %d, %q, %v", status, out, err)
		}
	}
	if s := p.Stats(); s.Created != 1 || s.Idle != 1 || s.Busy != 0 {
		t.Errorf("stats %+v, want one reused instance", s)
	}
}

func TestCallStatus(t *testing.T) {
	p := newPool(t, watGuest, Limits{}, Sandbox{})
	status, out, err := p.Call(context.Background(), []byte("s\x01"), nil, nil)
	if err != nil || status != abi.StatusError || string(out) != "s\x01" {
		t.Fatalf("Call = %d, %q, %v; want status 1", status, out, err)
	}
	status, _, err = p.Call(context.Background(), []byte("s\x07"), nil, nil)
	e := callErr(t, err, KindStatus)
	if status != 7 || e.ExitCode != 7 {
		t.Errorf("status %d, exit code %d, want 7", status, e.ExitCode)
	}
	if s := p.Stats(); s.Discarded != 1 {
		t.Errorf("stats %+v: the instance that returned status 7 was not discarded", s)
	}
}

// TestDeadline: a loop {} plugin is stopped at its deadline while another
// pool keeps answering.
func TestDeadline(t *testing.T) {
	testutil.WallClock(t) // the stop is timed: a guest spins in native code, which a fake clock cannot hold
	const timeout = 300 * time.Millisecond
	spin := newPool(t, watGuest, Limits{Timeout: timeout}, Sandbox{})
	echo := newPool(t, watGuest, Limits{}, Sandbox{})

	stop := make(chan struct{})
	var echoes int
	var echoErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, out, err := echo.Call(context.Background(), []byte("e ok"), nil, nil); err != nil || string(out) != "e ok" {
				echoErr = fmt.Errorf("echo during loop: %q, %v", out, err)
				return
			}
			echoes++
		}
	})
	start := time.Now()
	_, _, err := spin.Call(context.Background(), []byte("l"), nil, nil)
	took := time.Since(start)
	close(stop)
	wg.Wait()

	e := callErr(t, err, KindDeadline)
	if e.Timeout != timeout || !strings.Contains(e.Message, "300ms") {
		t.Errorf("timeout %v, message %q", e.Timeout, e.Message)
	}
	if took < timeout || took > timeout+2*time.Second {
		t.Errorf("loop stopped after %v, want about %v", took, timeout)
	}
	if echoErr != nil || echoes == 0 {
		t.Errorf("other pool: %d echoes, %v", echoes, echoErr)
	}
	// The pool still works after discarding the looping instance.
	if _, _, err := spin.Call(context.Background(), []byte("e"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if s := spin.Stats(); s.Discarded != 1 || s.Created != 2 {
		t.Errorf("stats %+v", s)
	}
}

func TestCallerDeadlineAndCancel(t *testing.T) {
	p := newPool(t, watGuest, Limits{Timeout: time.Minute}, Sandbox{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, _, err := p.Call(ctx, []byte("l"), nil, nil)
	if e := callErr(t, err, KindDeadline); e.Timeout > time.Second {
		t.Errorf("timeout %v, want the caller's 200ms", e.Timeout)
	}

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, _, err = p.Call(ctx, []byte("l"), nil, nil)
	callErr(t, err, KindCanceled)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancel took %v", d)
	}
	_, _, err = p.Call(ctx, []byte("e"), nil, nil)
	callErr(t, err, KindCanceled)
}

func TestMemoryLimit(t *testing.T) {
	t.Run("wat", func(t *testing.T) {
		p := newPool(t, watGuest, Limits{Memory: 1 << 20}, Sandbox{})
		_, _, err := p.Call(context.Background(), []byte("g"), nil, nil)
		e := callErr(t, err, KindMemory)
		if !strings.Contains(e.Message, "1 MiB") {
			t.Errorf("message %q", e.Message)
		}
	})
	t.Run("go", func(t *testing.T) {
		p := newPool(t, goPlugin, Limits{Memory: 32 << 20}, Sandbox{})
		_, _, err := p.Call(context.Background(), []byte(`{"method":"oom"}`), nil, nil)
		callErr(t, err, KindMemory)
		if _, out, err := p.Call(context.Background(), []byte(`{"method":"echo","params":1}`), nil, nil); err != nil || string(out) != "1" {
			t.Errorf("after OOM: %q, %v", out, err)
		}
	})
	t.Run("go below its start needs", func(t *testing.T) {
		m := fixture(t, goPlugin)
		p := newPool(t, goPlugin, Limits{Memory: m.minMem}, Sandbox{})
		_, _, err := p.Call(context.Background(), []byte(`{"method":"echo","params":1}`), nil, nil)
		e := callErr(t, err, KindMemory)
		t.Logf("min %d: %s", m.minMem, e.Message)
	})
}

func TestOutputCap(t *testing.T) {
	for _, tt := range []struct{ path, input string }{
		{watGuest, "f0123456789"},
		{goPlugin, `{"method":"flood"}`},
	} {
		t.Run(tt.path, func(t *testing.T) {
			p := newPool(t, tt.path, Limits{MaxOutput: 100 << 10}, Sandbox{})
			_, out, err := p.Call(context.Background(), []byte(tt.input), nil, nil)
			e := callErr(t, err, KindOutput)
			if out != nil || !strings.Contains(e.Message, "102400") {
				t.Errorf("output %d bytes, message %q", len(out), e.Message)
			}
		})
	}
}

// TestFailuresAreClassified: traps, Go panics and exits become errors of
// the right kind with short messages that name no host path.
func TestFailuresAreClassified(t *testing.T) {
	tests := []struct {
		name, path, input string
		kind              Kind
		msg               string
		code              uint32
	}{
		{"trap", watGuest, "t", KindTrap, "plugin crashed: unreachable", 0},
		{"proc_exit", watGuest, "x", KindExit, "plugin exited with code 3", 3},
		{"go panic", goPlugin, `{"method":"panic"}`, KindTrap, "plugin crashed: panic: boom", 0},
		{"go exit", goPlugin, `{"method":"exit"}`, KindExit, "plugin exited with code 3", 3},
		{"bad pointer", watGuest, "F\x01" + le(0xfffffff0, 64, 0, 0), KindTrap, "invalid memory range passed to output_write", 0},
		{"bad log pointer", watGuest, "F\x02" + le(1, 0xfffffff0, 64, 0), KindTrap, "invalid memory range passed to log", 0},
	}
	if !testing.Short() {
		tests = append(tests, struct {
			name, path, input string
			kind              Kind
			msg               string
			code              uint32
		}{"stack overflow", watGuest, "r", KindTrap, "plugin crashed: stack overflow", 0})
	}
	wd, _ := os.Getwd()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPool(t, tt.path, Limits{}, Sandbox{})
			_, _, err := p.Call(context.Background(), []byte(tt.input), nil, nil)
			e := callErr(t, err, tt.kind)
			if !strings.Contains(e.Message, tt.msg) || e.ExitCode != tt.code {
				t.Errorf("message %q code %d, want %q code %d", e.Message, e.ExitCode, tt.msg, tt.code)
			}
			if len(e.Message) > 250 || strings.Contains(e.Message, wd) || strings.Contains(e.Message, os.TempDir()) ||
				strings.Contains(e.Message, "\n") || strings.Contains(e.Message, ".go:") {
				t.Errorf("message %q is long or leaks paths", e.Message)
			}
			if e.Detail == "" || e.Err == nil {
				t.Errorf("no detail: %+v", e)
			}
			if s := p.Stats(); s.Discarded != 1 || s.Idle != 0 {
				t.Errorf("stats %+v: failed instance not discarded", s)
			}
		})
	}
}

// le packs four uint32 little-endian, for the fuzz driver op of guest.wat.
func le(a, b, c, d uint32) string {
	var buf [16]byte
	binary.LittleEndian.PutUint32(buf[0:], a)
	binary.LittleEndian.PutUint32(buf[4:], b)
	binary.LittleEndian.PutUint32(buf[8:], c)
	binary.LittleEndian.PutUint32(buf[12:], d)
	return string(buf[:])
}

func TestHostCalls(t *testing.T) {
	h := &fakeHost{reply: map[string]fakeReply{
		"config/get": {[]byte(`{"value":"v"}`), 0},
		"kv/get":     {[]byte(`{"code":-32000,"message":"nope"}`), abi.ErrFailed},
		"http/fetch": {nil, abi.ErrDenied},
	}}
	p := newPool(t, watGuest, Limits{}, Sandbox{})
	call := func(t *testing.T, h Host, in string) (int32, string) {
		t.Helper()
		_, out, err := p.Call(context.Background(), []byte(in), h, nil)
		if err != nil || len(out) < 4 {
			t.Fatalf("Call(%q) = %q, %v", in, out, err)
		}
		return int32(binary.LittleEndian.Uint32(out)), string(out[4:])
	}
	tests := []struct {
		name, in string
		host     Host
		errno    int32
		result   string
	}{
		{"result", "cconfig/get\n{\"key\":\"k\"}", h, 13, `{"value":"v"}`},
		{"failed with error json", "ckv/get\n{}", h, abi.ErrFailed, `{"code":-32000,"message":"nope"}`},
		{"denied", "chttp/fetch\n{}", h, abi.ErrDenied, ""},
		{"unknown", "cnope\n{}", h, abi.ErrUnknown, ""},
		{"nil host denies", "cconfig/get\n{}", nil, abi.ErrDenied, ""},
		{"method too long", "c" + strings.Repeat("m", 300) + "\n{}", h, abi.ErrUnknown, ""},
		{"bad method pointer", "F\x03" + le(0xfffffff0, 16, 0, 0), h, abi.ErrBadParams, ""},
		{"bad params pointer", "F\x03" + le(0, 4, 0xffffff00, 4096), h, abi.ErrBadParams, ""},
		{"params too big", "F\x03" + le(0, 4, 0, 0x7fffffff), h, abi.ErrTooBig, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errno, res := call(t, tt.host, tt.in)
			if errno != tt.errno || res != tt.result {
				t.Errorf("errno %d result %q, want %d %q", errno, res, tt.errno, tt.result)
			}
		})
	}
	if len(h.calls) == 0 || h.calls[0] != `config/get {"key":"k"}` {
		t.Errorf("host saw %q", h.calls)
	}

	// log, and a dropped log without host.
	if _, _, err := p.Call(context.Background(), []byte("L3disk almost full"), h, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Call(context.Background(), []byte("L3dropped"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(h.logs) != 1 || h.logs[0] != "warning:disk almost full" {
		t.Errorf("logs %q", h.logs)
	}
}

// cancelHost cancels the call's context from inside a host call.
type cancelHost struct {
	fakeHost
	cancel context.CancelFunc
	seen   int
}

func (h *cancelHost) Call(ctx context.Context, method string, params []byte) ([]byte, int32) {
	h.seen++
	h.cancel()
	return []byte(`{}`), 0
}

func TestCallImportCanceled(t *testing.T) {
	p := newPool(t, goPlugin, Limits{}, Sandbox{})
	ctx, cancel := context.WithCancel(context.Background())
	h := &cancelHost{cancel: cancel}
	// The plugin calls twice (http, kv, config in "sandbox"); after the
	// first the context is done, so the runtime answers -3 itself.
	_, _, err := p.Call(ctx, []byte(`{"method":"sandbox"}`), h, nil)
	if err == nil {
		t.Log("plugin returned before the runtime noticed the cancellation")
	} else {
		callErr(t, err, KindCanceled)
	}
	if h.seen != 1 {
		t.Errorf("host called %d times after cancellation, want 1", h.seen)
	}
}

func TestPoolBusy(t *testing.T) {
	p := newPool(t, watGuest, Limits{Instances: 1, MaxQueue: 1, Timeout: 5 * time.Second}, Sandbox{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { _, _, errs[i] = p.Call(ctx, []byte("l"), nil, nil) })
		waitFor(t, func() bool { s := p.Stats(); return s.Busy+s.Waiting == i+1 })
	}
	if s := p.Stats(); s.Busy != 1 || s.Waiting != 1 {
		t.Errorf("stats %+v, want 1 busy 1 waiting", s)
	}
	_, _, err := p.Call(ctx, []byte("e"), nil, nil)
	callErr(t, err, KindBusy)
	cancel()
	wg.Wait()
	for _, err := range errs {
		callErr(t, err, KindCanceled)
	}
}

func TestPoolClose(t *testing.T) {
	p := newPool(t, watGuest, Limits{Instances: 1, Timeout: 5 * time.Second}, Sandbox{})
	if _, _, err := p.Call(context.Background(), []byte("e"), nil, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var running, queued error
	var wg sync.WaitGroup
	wg.Go(func() { _, _, running = p.Call(ctx, []byte("l"), nil, nil) })
	waitFor(t, func() bool { return p.Stats().Busy == 1 })
	wg.Go(func() { _, _, queued = p.Call(ctx, []byte("e"), nil, nil) })
	waitFor(t, func() bool { return p.Stats().Waiting == 1 })
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	callErr(t, queued, KindClosed)
	cancel()
	_, _, err := p.Call(context.Background(), []byte("e"), nil, nil)
	callErr(t, err, KindClosed)
	// The in-flight call ran to its end (here: cancelled) and its instance
	// was closed, not pooled.
	waitFor(t, func() bool { return p.Stats().Busy == 0 })
	if running == nil {
		t.Error("looping call returned no error")
	}
	if s := p.Stats(); s.Idle != 0 {
		t.Errorf("stats %+v after close", s)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestRecycleByMemory(t *testing.T) {
	p := newPool(t, watGuest, Limits{Memory: 8 << 20, RecycleMemory: 1 << 20}, Sandbox{})
	if _, _, err := p.Call(context.Background(), []byte("G\x20"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Recycled != 1 || s.Idle != 0 || s.Discarded != 0 {
		t.Errorf("stats %+v, want the grown instance recycled", s)
	}
	if _, _, err := p.Call(context.Background(), []byte("G\x01"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Recycled != 1 || s.Idle != 1 {
		t.Errorf("stats %+v, want the small instance pooled", s)
	}
}

func TestConcurrentCalls(t *testing.T) {
	wat := newPool(t, watGuest, Limits{Instances: 4, MaxQueue: 64}, Sandbox{})
	gop := newPool(t, goPlugin, Limits{Instances: 2, MaxQueue: 64}, Sandbox{})
	n := 200
	if testing.Short() {
		n = 50
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Go(func() {
			for i := range n {
				p, in, want := wat, fmt.Sprintf("e %d/%d", g, i), ""
				if i%4 == 0 {
					p, in = gop, fmt.Sprintf(`{"method":"echo","params":"%d/%d"}`, g, i)
					want = fmt.Sprintf(`"%d/%d"`, g, i)
				} else {
					want = in
				}
				_, out, err := p.Call(context.Background(), []byte(in), nil, nil)
				if err != nil || string(out) != want {
					errs <- fmt.Errorf("call %q = %q, %v", in, out, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s := wat.Stats(); s.Created > 4 || s.Discarded != 0 {
		t.Errorf("wat stats %+v", s)
	}
	if s := gop.Stats(); s.Created > 2 || s.Discarded != 0 {
		t.Errorf("go stats %+v", s)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

var _ = errors.New
