package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/runtime"
)

// fakeClient records what the host sends and answers Request from fields.
type fakeClient struct {
	mu       sync.Mutex
	events   []string
	result   json.RawMessage
	err      error
	panicLog bool
}

func (c *fakeClient) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, s)
}

func (c *fakeClient) Log(level, logger string, data json.RawMessage) {
	if c.panicLog {
		panic("client broke")
	}
	c.add("log " + level + " " + logger + " " + string(data))
}

func (c *fakeClient) Progress(p float64, total *float64, msg string) {
	t := "nil"
	if total != nil {
		t = fmt.Sprint(*total)
	}
	c.add(fmt.Sprintf("progress %v %s %s", p, t, msg))
}
func (c *fakeClient) NotifyListChanged(kind string)    { c.add("list_changed " + kind) }
func (c *fakeClient) NotifyResourceUpdated(uri string) { c.add("updated " + uri) }
func (c *fakeClient) CloseStream()                     { c.add("close stream") }
func (c *fakeClient) StartTask()                       { c.add("start task") }
func (c *fakeClient) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	c.add("request " + method + " " + string(params))
	return c.result, c.err
}

type rpcErr struct{}

func (rpcErr) Error() string                    { return "user declined" }
func (rpcErr) RPCError() (code int, msg string) { return -32042, "user declined" }

func newHost(t testing.TB, g Grants) *Host {
	t.Helper()
	h, err := New(Options{Plugin: "p", Grants: g})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHostCall(t *testing.T) {
	all := Grants{Config: map[string]string{"api_key": "s3cret"}, Elicitation: true, Sampling: true, Roots: true}
	tests := []struct {
		name, method, params string
		grants               Grants
		client               *fakeClient
		errno                int32
		result, event        string
	}{
		{"unknown method", "fs/read", `{}`, all, &fakeClient{}, abi.ErrUnknown, "", ""},
		{"log", "log", `{"level":"warning","logger":"db","data":{"x":1}}`, all, &fakeClient{}, 0, `{}`, `log warning db {"x":1}`},
		{"log bad level", "log", `{"level":"loud","data":1}`, all, &fakeClient{}, abi.ErrBadParams, "", ""},
		{"log no data", "log", `{"level":"info"}`, all, &fakeClient{}, abi.ErrBadParams, "", ""},
		{"log not json", "log", `nope`, all, &fakeClient{}, abi.ErrBadParams, "", ""},
		{"log client panics", "log", `{"level":"info","data":1}`, all, &fakeClient{panicLog: true}, abi.ErrFailed, `{"code":-32603,"message":"internal error"}`, ""},
		{"progress", "progress", `{"progress":1,"total":4,"message":"m"}`, all, &fakeClient{}, 0, `{}`, "progress 1 4 m"},
		{"progress missing", "progress", `{"total":4}`, all, &fakeClient{}, abi.ErrBadParams, "", ""},
		{"list changed", "notify/list_changed", `{"kind":"tools"}`, all, &fakeClient{}, 0, `{}`, "list_changed tools"},
		{"list changed bad kind", "notify/list_changed", `{"kind":"files"}`, all, &fakeClient{}, abi.ErrBadParams, "", ""},
		{"resource updated", "notify/resource_updated", `{"uri":"a://b"}`, all, &fakeClient{}, 0, `{}`, "updated a://b"},
		{"resource updated no uri", "notify/resource_updated", `{}`, all, &fakeClient{}, abi.ErrBadParams, "", ""},
		{"stream close", "stream/close", `{}`, Grants{}, &fakeClient{}, 0, `{}`, "close stream"},
		{"stream close no params", "stream/close", ``, Grants{}, &fakeClient{}, 0, `{}`, "close stream"},
		{"stream close bad params", "stream/close", `[]`, Grants{}, &fakeClient{}, abi.ErrBadParams, "", ""},
		{"task start", "task/start", `{}`, Grants{}, &fakeClient{}, 0, `{}`, "start task"},
		{"task start bad params", "task/start", `"x"`, Grants{}, &fakeClient{}, abi.ErrBadParams, "", ""},
		{"config granted", "config/get", `{"key":"api_key"}`, all, &fakeClient{}, 0, `{"value":"s3cret"}`, ""},
		{"config not granted", "config/get", `{"key":"other"}`, all, &fakeClient{}, abi.ErrDenied, "", ""},
		{"config no grants", "config/get", `{"key":"api_key"}`, Grants{}, &fakeClient{}, abi.ErrDenied, "", ""},
		{"config bad params", "config/get", `[1]`, all, &fakeClient{}, abi.ErrBadParams, "", ""},
		{"http not granted", "http/fetch", `{"url":"https://example.com/"}`, Grants{}, &fakeClient{}, abi.ErrDenied, "", ""},
		{"kv not granted", "kv/get", `{"key":"k"}`, Grants{}, &fakeClient{}, abi.ErrDenied, "", ""},
		{"kv granted without store", "kv/get", `{"key":"k"}`, Grants{KV: true}, &fakeClient{}, abi.ErrDenied, "", ""},
		{"elicit", "elicitation/create", `{"message":"ok?"}`, all, &fakeClient{result: json.RawMessage(`{"action":"accept"}`)}, 0, `{"action":"accept"}`, `request elicitation/create {"message":"ok?"}`},
		{"elicit not granted", "elicitation/create", `{}`, Grants{}, &fakeClient{}, abi.ErrDenied, "", ""},
		{"sample unsupported", "sampling/createMessage", `{}`, all, &fakeClient{err: fmt.Errorf("stateless: %w", ErrUnsupported)}, abi.ErrUnsupported, "", "request sampling/createMessage {}"},
		{"roots rpc error", "roots/list", `{}`, all, &fakeClient{err: rpcErr{}}, abi.ErrFailed, `{"code":-32042,"message":"user declined"}`, "request roots/list {}"},
		{"roots other error", "roots/list", ``, all, &fakeClient{err: errors.New("boom")}, abi.ErrFailed, `{"code":-32603,"message":"boom"}`, "request roots/list {}"},
		{"request bad json", "roots/list", `{`, all, &fakeClient{}, abi.ErrBadParams, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newHost(t, tt.grants).Bind(tt.client)
			res, errno := b.Call(context.Background(), tt.method, []byte(tt.params))
			if errno != tt.errno || string(res) != tt.result {
				t.Errorf("Call = %s, %d; want %s, %d", res, errno, tt.result, tt.errno)
			}
			if tt.event != "" && (len(tt.client.events) != 1 || tt.client.events[0] != tt.event) {
				t.Errorf("client saw %q, want %q", tt.client.events, tt.event)
			}
			if tt.event == "" && len(tt.client.events) != 0 {
				t.Errorf("client saw %q, want nothing", tt.client.events)
			}
		})
	}
}

func TestNilClient(t *testing.T) {
	b := newHost(t, Grants{Sampling: true, Config: map[string]string{"k": "v"}}).Bind(nil)
	for _, tt := range []struct {
		method, params string
		errno          int32
	}{
		{"log", `{"level":"info","data":"x"}`, 0},
		{"progress", `{"progress":1}`, 0},
		{"notify/list_changed", `{"kind":"prompts"}`, 0},
		{"stream/close", `{}`, 0},
		{"task/start", `{}`, 0},
		{"sampling/createMessage", `{}`, abi.ErrUnsupported},
		{"config/get", `{"key":"k"}`, 0},
	} {
		if _, errno := b.Call(context.Background(), tt.method, []byte(tt.params)); errno != tt.errno {
			t.Errorf("%s: errno %d, want %d", tt.method, errno, tt.errno)
		}
	}
	b.Log(context.Background(), 3, []byte("dropped to the server log"))
}

func TestFastLogAndRateLimit(t *testing.T) {
	c := &fakeClient{}
	b := newHost(t, Grants{}).Bind(c)
	b.Log(context.Background(), 99, []byte("a \"quoted\" line"))
	if len(c.events) != 1 || c.events[0] != `log emergency  "a \"quoted\" line"` {
		t.Fatalf("events %q", c.events)
	}
	for range 2 * maxNotifications {
		b.Call(context.Background(), "progress", []byte(`{"progress":1}`))
	}
	if len(c.events) != maxNotifications {
		t.Errorf("%d notifications passed, want %d", len(c.events), maxNotifications)
	}
}

func TestCanceledCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := &fakeClient{}
	if _, errno := newHost(t, Grants{}).Bind(c).Call(ctx, "log", []byte(`{"level":"info","data":1}`)); errno != abi.ErrCanceled {
		t.Errorf("errno %d, want -3", errno)
	}
	if len(c.events) != 0 {
		t.Errorf("client called after cancellation")
	}
}

func TestNewRejectsBadRules(t *testing.T) {
	for _, r := range []string{"ftp://x/", "https://user@x/", "https://*.x.com/", "https:///", "https://x/?q=1", "x.com", "https://x/a/../b"} {
		if _, err := New(Options{Plugin: "p", Grants: Grants{HTTP: []string{r}}}); err == nil {
			t.Errorf("rule %q accepted", r)
		} else if !strings.Contains(err.Error(), "rule") {
			t.Errorf("rule %q: error %v does not say which rule", r, err)
		}
	}
	if _, err := New(Options{}); err == nil {
		t.Error("New without a plugin name succeeded")
	}
}

// countingHandler counts the records and bytes of text a logger receives.
type countingHandler struct {
	mu           sync.Mutex
	lines, bytes int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines++
	h.bytes += len(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		h.bytes += len(a.Key) + len(a.Value.String())
		return true
	})
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// TestLogFloodBounded: a call that logs and reports progress without end
// costs the client and the server log a bounded number of messages and
// bytes, whatever the size of each message.
func TestLogFloodBounded(t *testing.T) {
	huge := strings.Repeat("é", 128<<10)                        // 256 KiB, over every per-message bound; cut at a rune boundary
	hugeData, _ := json.Marshal(strings.Repeat("x", 100<<10))   // over maxLogData, under maxLogParams
	longMessage, _ := json.Marshal(strings.Repeat("x", 40<<10)) // over maxLogMessage, under maxProgressParams
	tests := []struct {
		name string
		n    int // calls
		call func(b runtime.Host)
	}{
		{"fast log, many small", 1050, func(b runtime.Host) { b.Log(context.Background(), 1, []byte("small line")) }},
		{"structured log, many small", 1050, func(b runtime.Host) {
			b.Call(context.Background(), "log", []byte(`{"level":"info","data":"small"}`))
		}},
		{"progress, many small", 1050, func(b runtime.Host) { b.Call(context.Background(), "progress", []byte(`{"progress":1}`)) }},
		{"fast log, huge", 200, func(b runtime.Host) { b.Log(context.Background(), 1, []byte(huge)) }},
		{"structured log, huge data", 100, func(b runtime.Host) {
			b.Call(context.Background(), "log", []byte(`{"level":"info","logger":"`+strings.Repeat("l", 10000)+`","data":`+string(hugeData)+`}`))
		}},
		{"progress, huge message", 100, func(b runtime.Host) {
			b.Call(context.Background(), "progress", []byte(`{"progress":1,"message":`+string(longMessage)+`}`))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &countingHandler{}
			h, err := New(Options{Plugin: "p", Logger: slog.New(srv)})
			if err != nil {
				t.Fatal(err)
			}
			c := &fakeClient{}
			b := h.Bind(c)
			for range tt.n {
				tt.call(b)
			}
			size := 0
			for _, e := range c.events {
				size += len(e)
				if !utf8.ValidString(e) {
					t.Fatalf("notification is not valid UTF-8")
				}
				if len(e) > 64<<10+1024 {
					t.Fatalf("one notification of %d bytes, bound 64 KiB", len(e))
				}
			}
			if len(c.events) == 0 || len(c.events) > 1000 {
				t.Errorf("%d notifications, want 1..1000", len(c.events))
			}
			// The documented bounds, as numbers: 1 MiB of notifications
			// (plus the fake client's formatting) and 1,000 server log
			// lines of about 1 KiB.
			if size > 1<<20+len(c.events)*64 {
				t.Errorf("%d bytes of notifications, bound 1 MiB", size)
			}
			if srv.lines > 1001 {
				t.Errorf("%d server log lines, bound 1001", srv.lines)
			}
			if srv.bytes > 1001*(1<<10+400) {
				t.Errorf("%d bytes of server log, bound about 1 MiB", srv.bytes)
			}
		})
	}
}

// TestHugeLogParamsRefused: log, progress and notify/* params over their
// bound are refused (-4) before being decoded, and nothing is sent.
func TestHugeLogParamsRefused(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	c := &fakeClient{}
	b := newHost(t, Grants{}).Bind(c)
	for _, call := range []struct{ method, params string }{
		{"log", `{"level":"info","data":"` + huge + `"}`},
		{"progress", `{"progress":1,"message":"` + huge + `"}`},
		{"notify/list_changed", `{"kind":"tools","x":"` + huge + `"}`},
		{"notify/resource_updated", `{"uri":"` + huge + `"}`},
	} {
		if _, errno := b.Call(context.Background(), call.method, []byte(call.params)); errno != abi.ErrTooBig {
			t.Errorf("%s with 1 MiB params: errno %d, want %d", call.method, errno, abi.ErrTooBig)
		}
	}
	if len(c.events) != 0 {
		t.Errorf("sent %d notifications", len(c.events))
	}
}

// TestChangeNotificationsBounded: past maxChangeNotifications in one call,
// notify/* calls answer {} and reach nobody, even with bad params (they are
// not decoded); within the bound bad params are refused.
func TestChangeNotificationsBounded(t *testing.T) {
	c := &fakeClient{}
	b := newHost(t, Grants{}).Bind(c)
	call := func(method, params string) ([]byte, int32) {
		return b.Call(context.Background(), method, []byte(params))
	}
	if _, errno := call("notify/list_changed", `[]`); errno != abi.ErrBadParams {
		t.Errorf("bad params within the bound: errno %d", errno)
	}
	for i := 1; i < maxChangeNotifications+10; i++ {
		method, params := "notify/list_changed", `{"kind":"tools"}`
		if i%2 == 0 {
			method, params = "notify/resource_updated", `{"uri":"a://b"}`
		}
		if res, errno := call(method, params); errno != 0 || string(res) != "{}" {
			t.Fatalf("call %d: %s, %d", i, res, errno)
		}
	}
	if res, errno := call("notify/resource_updated", `[]`); errno != 0 || string(res) != "{}" {
		t.Errorf("bad params past the bound: %s, %d; want {}, 0", res, errno)
	}
	if n := len(c.events); n != maxChangeNotifications-1 {
		t.Errorf("client saw %d notifications, want %d", n, maxChangeNotifications-1)
	}
}
