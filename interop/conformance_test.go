package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conformanceConfig is the configuration that serves the conformance
// fixtures, all of them Wasm plugins (examples/conformance).
const conformanceConfig = "../examples/conformance/wasmcp.toml"

var (
	buildOnce sync.Once
	wasmcpBin string
	buildErr  error
)

// wasmcpCommand builds cmd/wasmcp once per test binary and returns it.
func wasmcpCommand(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wasmcp-interop-")
		if err != nil {
			buildErr = err
			return
		}
		wasmcpBin = filepath.Join(dir, "wasmcp")
		cmd := exec.Command("go", "build", "-o", wasmcpBin, "./cmd/wasmcp")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/wasmcp: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return wasmcpBin
}

// fixtureClient is an SDK client that answers like the conformance suite's
// referee, and records notifications.
type fixtureClient struct {
	*mcp.Client
	rec     *recorder
	mu      sync.Mutex
	elicits []string // messages of the elicitations the client saw
	samples int
}

func newFixtureClient() *fixtureClient {
	fc := &fixtureClient{rec: newRecorder()}
	fc.Client = mcp.NewClient(&mcp.Implementation{Name: "interop-conformance", Version: "1"}, withHandlers(&mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fc.mu.Lock()
			fc.elicits = append(fc.elicits, req.Params.Message)
			fc.mu.Unlock()
			content := map[string]any{"username": "testuser", "email": "test@example.com", "context": "tests"}
			if strings.Contains(req.Params.Message, "favorite color") {
				content = map[string]any{"color": "green"}
			} else if strings.Contains(req.Params.Message, "name?") {
				content = map[string]any{"name": "Ada"}
			}
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		},
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			fc.mu.Lock()
			fc.samples++
			fc.mu.Unlock()
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", StopReason: "endTurn",
				Content: &mcp.TextContent{Text: "This is a test response from the client"}}, nil
		},
	}, fc.rec.observe(func(p *mcp.LoggingMessageParams) string { return fmt.Sprint(p.Data) })))
	fc.AddRoots(&mcp.Root{URI: "file:///test/root", Name: "Test Root"})
	return fc
}

// TestConformanceFixturesStdio serves examples/conformance over stdio with
// `wasmcp serve --config` and exercises its plugins with the official Go
// SDK client, on legacy sessions (where the host performs the plugins'
// input_required requests as server-to-client requests) and on 2026-07-28
// (where the SDK answers the input_required results itself).
func TestConformanceFixturesStdio(t *testing.T) {
	bin := wasmcpCommand(t)
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			fc := newFixtureClient()
			cmd := exec.Command(bin, "serve", "--config", conformanceConfig)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cs, err := fc.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v\nserver log:\n%s", err, stderr.String())
			}
			t.Cleanup(func() { cs.Close() })
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			exerciseFixtures(t, cs, fc, version == "2026-07-28")
		})
	}
}

func exerciseFixtures(t *testing.T, cs *mcp.ClientSession, fc *fixtureClient, modern bool) {
	ctx := t.Context()
	names := toolNames(t, cs)
	if len(names) == 0 || names[0] != "test_simple_text" {
		t.Fatalf("tools/list starts with %v, want test_simple_text first", names)
	}
	for _, want := range []string{"test_image_content", "test_audio_content", "test_input_required_result_multi_round", "json_schema_2020_12_tool"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tool %s missing from %v", want, names)
		}
	}

	call := toolCaller(t, cs)
	// text joins the result's text blocks.
	text := func(r *mcp.CallToolResult) string {
		var parts []string
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				parts = append(parts, tc.Text)
			}
		}
		return strings.Join(parts, "\n")
	}

	// Content types, from the Go and the C plugin.
	if got := text(call("test_simple_text", nil, nil)); got != "This is a simple text response for testing." {
		t.Errorf("test_simple_text = %q", got)
	}
	if r := call("test_image_content", nil, nil); len(r.Content) != 1 {
		t.Errorf("test_image_content = %+v", r.Content)
	} else if img, ok := r.Content[0].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || !bytes.HasPrefix(img.Data, []byte("\x89PNG")) {
		t.Errorf("test_image_content = %#v", r.Content[0])
	}
	if r := call("test_audio_content", nil, nil); len(r.Content) != 1 {
		t.Errorf("test_audio_content = %+v", r.Content)
	} else if a, ok := r.Content[0].(*mcp.AudioContent); !ok || a.MIMEType != "audio/wav" || !bytes.HasPrefix(a.Data, []byte("RIFF")) || len(a.Data) != 44+1600 {
		t.Errorf("test_audio_content = %T %d bytes", r.Content[0], len(r.Content))
	}
	if r := call("test_multiple_content_types", nil, nil); len(r.Content) != 3 {
		t.Errorf("test_multiple_content_types: %d blocks", len(r.Content))
	} else if er, ok := r.Content[2].(*mcp.EmbeddedResource); !ok || er.Resource.URI != "test://mixed-content-resource" {
		t.Errorf("test_multiple_content_types resource = %#v", r.Content[2])
	}
	if r := call("test_error_handling", nil, nil); !r.IsError || text(r) == "" {
		t.Errorf("test_error_handling = %+v", r)
	}

	// Progress and logs reach the client while the tool runs.
	call("test_tool_with_progress", nil, mcp.Meta{"progressToken": "progress-test-1"})
	fc.rec.waitFor(t, "3 progress notifications", func() bool { return len(fc.rec.progress) >= 3 })
	call("test_tool_with_logging", nil, logLevel(t, cs, modern, "debug"))
	fc.rec.waitFor(t, "3 log notifications", func() bool { return len(fc.rec.logs) >= 3 })

	// Client requests, written once as input_required by the plugin.
	if got := text(call("test_sampling", map[string]any{"prompt": "Hello?"}, nil)); got != "LLM response: This is a test response from the client" {
		t.Errorf("test_sampling = %q", got)
	}
	if got := text(call("test_elicitation", map[string]any{"message": "Who are you?"}, nil)); !strings.HasPrefix(got, "User response: action=accept, content={") || !strings.Contains(got, `"username":"testuser"`) {
		t.Errorf("test_elicitation = %q", got)
	}
	if got := text(call("test_input_required_result_multi_round", nil, nil)); got != "Ada likes green." {
		t.Errorf("multi_round = %q", got)
	}
	if got := text(call("test_input_required_result_multiple_inputs", nil, nil)); !strings.Contains(got, "name=Ada") || !strings.Contains(got, "file:///test/root (Test Root)") {
		t.Errorf("multiple_inputs = %q", got)
	}
	fc.mu.Lock()
	if !slices.Contains(fc.elicits, "Step 2: What is your favorite color?") || fc.samples < 2 {
		t.Errorf("the client saw elicitations %q and %d samplings", fc.elicits, fc.samples)
	}
	fc.mu.Unlock()
	if r := call("test_x_mcp_header", map[string]any{"region": "eu", "level": 2}, nil); text(r) != `region="eu" level=2` {
		t.Errorf("test_x_mcp_header = %q", text(r))
	}

	// Resources.
	read := func(uri string) *mcp.ResourceContents {
		t.Helper()
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(r.Contents) != 1 {
			t.Fatalf("ReadResource %s: %+v, %v", uri, r, err)
		}
		return r.Contents[0]
	}
	if c := read("test://static-text"); c.Text != "This is the content of the static text resource." {
		t.Errorf("static-text = %+v", c)
	}
	if c := read("test://static-binary"); c.MIMEType != "image/png" || !bytes.HasPrefix(c.Blob, []byte("\x89PNG")) {
		t.Errorf("static-binary = %+v", c)
	}
	if c := read("test://template/123/data"); c.Text != `{"id":"123","templateTest":true,"data":"Data for ID: 123"}` {
		t.Errorf("template = %+v", c)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://nonexistent"}); err == nil {
		t.Error("unknown resource: no error")
	}

	// Prompts and completion.
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "a", "arg2": "b"}})
	if err != nil || len(gp.Messages) != 1 || gp.Messages[0].Content.(*mcp.TextContent).Text != "Prompt with arguments: arg1='a', arg2='b'" {
		t.Errorf("GetPrompt with arguments: %+v, %v", gp, err)
	}
	gp, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_image"})
	if err != nil || len(gp.Messages) != 2 {
		t.Errorf("GetPrompt with image: %+v, %v", gp, err)
	} else if _, ok := gp.Messages[0].Content.(*mcp.ImageContent); !ok {
		t.Errorf("GetPrompt with image: first message %T", gp.Messages[0].Content)
	}
	gp, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_input_required_result_prompt"})
	if err != nil || len(gp.Messages) != 1 || !strings.HasPrefix(gp.Messages[0].Content.(*mcp.TextContent).Text, "Use this context:") {
		t.Errorf("GetPrompt input_required: %+v, %v", gp, err)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
		Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "test"}})
	if err != nil || strings.Join(comp.Completion.Values, ",") != "testValue1,testValue2" {
		t.Errorf("Complete: %+v, %v", comp, err)
	}

	// The tool list really changes (2026-07-28: through subscriptions/listen).
	call("test_trigger_tool_change", nil, nil)
	fc.rec.waitFor(t, "tools/list_changed", func() bool { return fc.rec.changed >= 1 })
	if names := toolNames(t, cs); !slices.Contains(names, "test_transient_tool") {
		t.Errorf("test_transient_tool not listed after the trigger: %v", names)
	}
	call("test_trigger_tool_change", nil, nil) // back to the initial list
	fc.rec.waitFor(t, "second tools/list_changed", func() bool { return fc.rec.changed >= 2 })
}

// TestConformanceReconnection checks the stream/close host call end to
// end: test_reconnection's POST response ends without the result, and a GET
// with Last-Event-ID delivers it (Streamable HTTP SSE polling).
func TestConformanceReconnection(t *testing.T) {
	bin := wasmcpCommand(t)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--config", conformanceConfig, "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	urlRE := regexp.MustCompile(`serving MCP on (http://\S+)`)
	var url string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := urlRE.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	if url == "" {
		t.Fatal("the server printed no URL")
	}
	go io.Copy(io.Discard, stderr)

	post := func(session string, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize: status %d, no session", resp.StatusCode)
	}
	resp = post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()

	// The POST stream: events up to its end, but no result.
	resp = post(session, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_reconnection"}}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("tools/call answered %s, want an event stream", ct)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var lastID string
	for _, line := range strings.Split(string(body), "\n") {
		if id, ok := strings.CutPrefix(line, "id:"); ok {
			lastID = strings.TrimSpace(id)
		}
	}
	if strings.Contains(string(body), `"result"`) || lastID == "" {
		t.Fatalf("POST stream %q: want an event id and no result", body)
	}

	// The resumed stream replays what followed, the result included.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", lastID)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	deadline := time.AfterFunc(10*time.Second, func() { resp.Body.Close() })
	defer deadline.Stop()
	sc = bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok || strings.TrimSpace(data) == "" {
			continue
		}
		var msg struct {
			ID     *int `json:"id"`
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(data), &msg) == nil && msg.ID != nil && *msg.ID == 1 {
			if len(msg.Result.Content) != 1 || msg.Result.Content[0].Text != "Reconnection test completed" {
				t.Fatalf("result %s", data)
			}
			return
		}
	}
	t.Fatalf("the resumed stream ended without the result (status %d)", resp.StatusCode)
}
