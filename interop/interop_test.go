package interop

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	wmcp "github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// serveEnv makes the test binary act as a stdio MCP server, for
// CommandTransport.
const serveEnv = "WASMCP_INTEROP_SERVE_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		p := mcptest.New(nil)
		s := wmcp.NewServer(p, &wmcp.Options{Name: "wasmcp-interop", Version: "test"})
		p.SetServer(s)
		if err := s.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// wait guards against hangs; no assertion depends on timing.
const wait = 30 * time.Second

// recorder collects what the client receives.
type recorder struct {
	mu       sync.Mutex
	progress []float64
	logs     []string
	changed  int
	signal   chan struct{}
}

func newRecorder() *recorder { return &recorder{signal: make(chan struct{}, 64)} }

func (r *recorder) note(f func()) {
	r.mu.Lock()
	f()
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

// waitFor polls cond on every event until it holds.
func (r *recorder) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		r.mu.Lock()
		ok := cond()
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.signal:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func newClient(rec *recorder) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1"}, withHandlers(&mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Bob"}}, nil
		},
	}, rec.observe(func(p *mcp.LoggingMessageParams) string { return string(p.Level) })))
}

// observe returns the handlers that record into r what a client receives:
// progress, logs (as logged says) and tools/list_changed.
func (r *recorder) observe(logged func(*mcp.LoggingMessageParams) string) mcp.ClientOptions {
	return mcp.ClientOptions{
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			r.note(func() { r.progress = append(r.progress, req.Params.Progress) })
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			r.note(func() { r.logs = append(r.logs, logged(req.Params)) })
		},
		ToolListChangedHandler: func(ctx context.Context, req *mcp.ToolListChangedRequest) {
			r.note(func() { r.changed++ })
		},
	}
}

// withHandlers is o with the notification handlers of h.
func withHandlers(o *mcp.ClientOptions, h mcp.ClientOptions) *mcp.ClientOptions {
	o.ProgressNotificationHandler = h.ProgressNotificationHandler
	o.LoggingMessageHandler = h.LoggingMessageHandler
	o.ToolListChangedHandler = h.ToolListChangedHandler
	return o
}

type transportCase struct {
	name    string
	connect func(t *testing.T, c *mcp.Client, version string) *mcp.ClientSession
}

var transports = []transportCase{
	{"http", func(t *testing.T, c *mcp.Client, version string) *mcp.ClientSession {
		p := mcptest.New(nil)
		s := wmcp.NewServer(p, &wmcp.Options{Name: "wasmcp-interop", Version: "test"})
		p.SetServer(s)
		ts := httptest.NewServer(s.HTTPHandler(nil))
		t.Cleanup(func() {
			s.Close()
			ts.Close()
		})
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}},
	{"stdio-command", func(t *testing.T, c *mcp.Client, version string) *mcp.ClientSession {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), serveEnv+"=1")
		cmd.Stderr = os.Stderr
		cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}},
	{"stdio-pipe", func(t *testing.T, c *mcp.Client, version string) *mcp.ClientSession {
		p := mcptest.New(nil)
		s := wmcp.NewServer(p, nil)
		p.SetServer(s)
		cw, cr, done := mcptest.ServeStdio(context.Background(), s)
		cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: cr, Writer: cw}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() {
			cs.Close()
			cw.Close()
			testutil.AwaitReturn(t, done, wait, "ServeStdio")
			s.Close()
		})
		return cs
	}},
}

func TestOfficialClient(t *testing.T) {
	for _, tc := range transports {
		for _, version := range []string{"2025-11-25", "2025-06-18", "2026-07-28"} {
			t.Run(tc.name+"/"+version, func(t *testing.T) {
				rec := newRecorder()
				cs := tc.connect(t, newClient(rec), version)
				if got := cs.InitializeResult().ProtocolVersion; got != version {
					t.Fatalf("negotiated %s, want %s", got, version)
				}
				if si := cs.InitializeResult().ServerInfo; si == nil || si.Name == "" {
					t.Errorf("serverInfo = %+v", si)
				}
				exercise(t, cs, rec, version)
			})
		}
	}
}

func exercise(t *testing.T, cs *mcp.ClientSession, rec *recorder, version string) {
	ctx := t.Context()
	modern := version == "2026-07-28"

	names := toolNames(t, cs)
	for _, want := range []string{"echo", "add", "progress", "elicit", "header"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tool %s missing from %v", want, names)
		}
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) == 0 {
		t.Fatalf("ListResources: %v %v", res, err)
	}
	tpls, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tpls.ResourceTemplates) != 1 {
		t.Fatalf("ListResourceTemplates: %v %v", tpls, err)
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 2 {
		t.Fatalf("ListPrompts: %v %v", prompts, err)
	}

	call := toolCaller(t, cs)
	// text is the result's first block, which must be text.
	text := func(r *mcp.CallToolResult) string {
		t.Helper()
		if len(r.Content) == 0 {
			t.Fatal("empty content")
		}
		tc, ok := r.Content[0].(*mcp.TextContent)
		if !ok {
			t.Fatalf("content %T", r.Content[0])
		}
		return tc.Text
	}
	if got := text(call("echo", map[string]any{"text": "hi"}, nil)); got != "hi" {
		t.Fatalf("echo = %q", got)
	}
	sum := call("add", map[string]any{"a": 2, "b": 3}, nil)
	if b, _ := json.Marshal(sum.StructuredContent); string(b) != `{"sum":5}` {
		t.Fatalf("structuredContent = %s", b)
	}
	if r := call("fail", nil, nil); !r.IsError {
		t.Fatal("fail: IsError = false")
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Fatal("unknown tool: no error")
	}

	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-text"})
	if err != nil || len(read.Contents) != 1 || !strings.Contains(read.Contents[0].Text, "static text") {
		t.Fatalf("ReadResource: %+v %v", read, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://missing"}); err == nil {
		t.Fatal("missing resource: no error")
	}
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "with_args", Arguments: map[string]string{"arg1": "x"}})
	if err != nil || len(gp.Messages) != 1 {
		t.Fatalf("GetPrompt: %+v %v", gp, err)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "with_args"}, Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "al"}})
	if err != nil || len(comp.Completion.Values) != 2 {
		t.Fatalf("Complete: %+v %v", comp, err)
	}

	// Progress notifications.
	call("progress", map[string]any{"steps": 3}, mcp.Meta{"progressToken": "tok"})
	rec.waitFor(t, "3 progress notifications", func() bool { return len(rec.progress) >= 3 })

	// Logging: session level for legacy, per-request level for 2026-07-28.
	call("log", nil, logLevel(t, cs, modern, "error"))
	rec.waitFor(t, "4 log notifications", func() bool { return len(rec.logs) >= 4 })
	rec.mu.Lock()
	if rec.logs[0] != "error" {
		t.Errorf("first log level %s", rec.logs[0])
	}
	rec.mu.Unlock()

	// Elicitation: a server-to-client request (legacy) or an
	// input_required round trip (2026-07-28); the SDK handles both.
	if got := text(call("elicit", nil, nil)); got != "hello Bob" {
		t.Fatalf("elicit = %q", got)
	}

	// list_changed (2026-07-28: through the client's subscriptions/listen).
	call("change_tools", nil, nil)
	rec.waitFor(t, "tools/list_changed", func() bool { return rec.changed >= 1 })
	if !slices.Contains(toolNames(t, cs), "transient") {
		t.Error("transient tool not listed after list_changed")
	}
}

// toolCaller returns a function that calls a tool through cs and fails t
// on a protocol error.
func toolCaller(t *testing.T, cs *mcp.ClientSession) func(name string, args map[string]any, meta mcp.Meta) *mcp.CallToolResult {
	return func(name string, args map[string]any, meta mcp.Meta) *mcp.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
		if err != nil {
			t.Fatalf("CallTool %s: %v", name, err)
		}
		return r
	}
}

// toolNames lists the tools cs is offered.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// logLevel asks for log messages at level and above: on a legacy session
// it sets the session's level and returns no _meta; on 2026-07-28 it
// returns the _meta that asks for it per request.
func logLevel(t *testing.T, cs *mcp.ClientSession, modern bool, level mcp.LoggingLevel) mcp.Meta {
	t.Helper()
	if modern {
		return mcp.Meta{"io.modelcontextprotocol/logLevel": string(level)}
	}
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: level}); err != nil {
		t.Fatalf("SetLoggingLevel: %v", err)
	}
	return nil
}
