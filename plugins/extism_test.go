package plugins

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// recHost records the wasmcp/1 calls an extismHost makes and answers from
// a table.
type recHost struct {
	calls []string
	reply map[string]struct {
		res   string
		errno int32
	}
}

func (h *recHost) Log(context.Context, int32, []byte) {}

func (h *recHost) Call(_ context.Context, method string, params []byte) ([]byte, int32) {
	h.calls = append(h.calls, method+" "+string(params))
	r, ok := h.reply[method]
	if !ok {
		return []byte("{}"), 0
	}
	return []byte(r.res), r.errno
}

func TestExtismHostMapping(t *testing.T) {
	cases := []struct {
		fn, params, want string
	}{
		{"notify_progress", `{"progressToken":"t","progress":1}`, `progress {"progressToken":"t","progress":1}`},
		{"notify_logging_message", `{"level":"info","data":"x"}`, `log {"level":"info","data":"x"}`},
		{"notify_resource_updated", `{"uri":"a://b"}`, `notify/resource_updated {"uri":"a://b"}`},
		{"notify_tool_list_changed", `{}`, `notify/list_changed {"kind":"tools"}`},
		{"notify_resource_list_changed", `{}`, `notify/list_changed {"kind":"resources"}`},
		{"notify_prompt_list_changed", `{}`, `notify/list_changed {"kind":"prompts"}`},
		{"create_elicitation", `{"message":"m","timeout":5}`, `elicitation/create {"message":"m"}`},
		{"create_message", `{"maxTokens":3}`, `sampling/createMessage {"maxTokens":3}`},
		{"list_roots", `{}`, `roots/list {}`},
		{"config/get", `{"key":"k"}`, `config/get {"key":"k"}`},
		{"http/fetch", `{"url":"u"}`, `http/fetch {"url":"u"}`},
		{"notify_url_elicitation_completed", `{"elicitationId":"e"}`, ``},
		{"kv/get", `{"key":"k"}`, ``}, // not an Extism host function: refused
	}
	for _, tc := range cases {
		t.Run(tc.fn, func(t *testing.T) {
			h := &recHost{}
			xh := &extismHost{Host: h}
			xh.Call(context.Background(), tc.fn, []byte(tc.params))
			got := strings.Join(h.calls, "; ")
			if got != tc.want {
				t.Fatalf("calls = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestExtismUserFunctions: every function the engine is given for
// extism:host/user is one extismHost maps (never abi.ErrUnknown), and the
// table handed out is a copy.
func TestExtismUserFunctions(t *testing.T) {
	fns := ExtismUserFunctions()
	if len(fns) != 10 {
		t.Fatalf("%d functions, want hyper-mcp's 10", len(fns))
	}
	for _, f := range fns {
		xh := &extismHost{Host: &recHost{}}
		if _, errno := xh.Call(context.Background(), f.Name, []byte("{}")); errno == abi.ErrUnknown {
			t.Errorf("%s: extismHost.Call does not map it", f.Name)
		}
	}
	fns[0].Name = "changed"
	if ExtismUserFunctions()[0].Name == "changed" {
		t.Error("ExtismUserFunctions hands out its own table")
	}
}

// TestExtismReplay: on a 2026-07-28 request, a blocking request the client
// cannot be asked stops the guest and becomes input_required; the retry
// replays the answers in order.
var elicitCaps = json.RawMessage(`{"elicitation":{}}`)

func TestExtismReplay(t *testing.T) {
	ctx := context.Background()
	unsupported := &recHost{reply: map[string]struct {
		res   string
		errno int32
	}{abi.HostElicit: {"", abi.ErrUnsupported}}}

	// Round 1: the first request is pending.
	xh := &extismHost{Host: unsupported, stateless: true, caps: elicitCaps}
	if _, errno := xh.Call(ctx, "create_elicitation", []byte(`{"message":"one"}`)); errno != abi.ErrCanceled || xh.pending == nil {
		t.Fatalf("round 1: errno %d, pending %v", errno, xh.pending)
	}
	var ir struct {
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
		RequestState string `json:"requestState"`
	}
	if err := json.Unmarshal(xh.inputRequired(), &ir); err != nil || ir.InputRequests["r0"].Method != abi.HostElicit {
		t.Fatalf("input_required = %s", xh.inputRequired())
	}

	// Round 2: r0 answered; the second request is pending, the state
	// carries the first answer.
	xh = &extismHost{Host: unsupported, stateless: true, caps: elicitCaps}
	if err := xh.restore(&ir.RequestState, json.RawMessage(`{"r0":{"action":"accept"}}`)); err != nil {
		t.Fatal(err)
	}
	if res, errno := xh.Call(ctx, "create_elicitation", []byte(`{"message":"one"}`)); errno != 0 || string(res) != `{"action":"accept"}` {
		t.Fatalf("round 2 first answer = %s %d", res, errno)
	}
	if _, errno := xh.Call(ctx, "create_elicitation", []byte(`{"message":"two"}`)); errno != abi.ErrCanceled || xh.pending.key != "r1" {
		t.Fatalf("round 2 second request: errno %d pending %+v", errno, xh.pending)
	}
	_ = json.Unmarshal(xh.inputRequired(), &ir)

	// Round 3: both answered from state and responses; the host is never asked.
	xh = &extismHost{Host: unsupported, stateless: true, caps: elicitCaps}
	if err := xh.restore(&ir.RequestState, json.RawMessage(`{"r1":{"action":"decline"}}`)); err != nil {
		t.Fatal(err)
	}
	a, _ := xh.Call(ctx, "create_elicitation", []byte(`{"message":"one"}`))
	b, _ := xh.Call(ctx, "create_elicitation", []byte(`{"message":"two"}`))
	if string(a) != `{"action":"accept"}` || string(b) != `{"action":"decline"}` || xh.pending != nil {
		t.Fatalf("round 3 = %s %s %+v", a, b, xh.pending)
	}
	if len(unsupported.calls) != 2 {
		t.Fatalf("host asked %d times, want 2 (once per new request)", len(unsupported.calls))
	}
	// A replay whose method differs fails the request.
	xh = &extismHost{Host: unsupported, stateless: true, caps: elicitCaps}
	_ = xh.restore(&ir.RequestState, nil)
	if _, errno := xh.Call(ctx, "list_roots", nil); errno != abi.ErrFailed {
		t.Fatalf("mismatched replay errno %d", errno)
	}
	// Nor is one whose client cannot elicit.
	xh = &extismHost{Host: unsupported, stateless: true, caps: json.RawMessage(`{"sampling":{}}`)}
	if _, errno := xh.Call(ctx, "create_elicitation", []byte(`{}`)); errno != abi.ErrUnsupported || xh.pending != nil {
		t.Fatalf("no capability: errno %d pending %v", errno, xh.pending)
	}
	// A legacy request is never turned into input_required.
	xh = &extismHost{Host: unsupported}
	if _, errno := xh.Call(ctx, "create_elicitation", []byte(`{}`)); errno != abi.ErrUnsupported || xh.pending != nil {
		t.Fatalf("legacy: errno %d pending %v", errno, xh.pending)
	}
}

func TestStripRefPrefix(t *testing.T) {
	for in, want := range map[string]string{
		`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"}}`: `{"argument":{"name":"a","value":"v"},"ref":{"name":"p","type":"prompt"}}`,
		`{"ref":{"type":"ref/resource","uri":"u://x"}}`:                                `{"ref":{"type":"resource","uri":"u://x"}}`,
		`{"ref":{"type":"prompt"}}`:                                                    `{"ref":{"type":"prompt"}}`,
		`{"ref":"nope"}`:                                                               `{"ref":"nope"}`,
		`[]`:                                                                           `[]`,
	} {
		if got := string(stripRefPrefix(json.RawMessage(in))); got != want {
			t.Errorf("stripRefPrefix(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestFixContentTypes(t *testing.T) {
	for in, want := range map[string]string{
		`{"content":[{"text":"a"}]}`:                                `{"content":[{"text":"a","type":"text"}]}`,
		`{"content":[{"type":"text","text":"a"}]}`:                  `{"content":[{"type":"text","text":"a"}]}`,
		`{"messages":[{"role":"user","content":{"text":"hi"}}]}`:    `{"messages":[{"content":{"text":"hi","type":"text"},"role":"user"}]}`,
		`{"contents":[{"uri":"a://b","text":"x"}]}`:                 `{"contents":[{"uri":"a://b","text":"x"}]}`,
		`not json "text"`:                                           `not json "text"`,
		`{"content":[{"type":"image","data":"x"},{"text":"a"}]}`:    `{"content":[{"data":"x","type":"image"},{"text":"a","type":"text"}]}`,
		`{"content":[{"type":"text","text":"a"}],"text":"confuse"}`: `{"content":[{"type":"text","text":"a"}],"text":"confuse"}`,
	} {
		if got := string(fixContentTypes([]byte(in))); got != want {
			t.Errorf("fixContentTypes(%s) = %s, want %s", in, got, want)
		}
	}
}

// FuzzExtismAdapter feeds arbitrary requestState, inputResponses and
// plugin results to the adapter's parsers: none may panic, and a result
// stays valid JSON if it was.
func FuzzExtismAdapter(f *testing.F) {
	f.Add(`[{"m":"elicitation/create","r":{"action":"accept"}}]`, `{"r0":{}}`, `{"content":[{"text":"a"}]}`)
	f.Add(`x`, `[]`, `{"messages":[{"content":{"text":1}}]}`)
	f.Add(``, `null`, `{"ref":{"type":"ref/prompt"}}`)
	f.Fuzz(func(t *testing.T, state, responses, result string) {
		xh := &extismHost{Host: &recHost{}, stateless: true, caps: elicitCaps}
		if xh.restore(&state, json.RawMessage(responses)) == nil {
			for i := 0; i < 3; i++ {
				xh.Call(context.Background(), "create_elicitation", []byte(`{}`))
			}
			if xh.pending != nil && !json.Valid(xh.inputRequired()) {
				t.Fatalf("input_required is not JSON: %s", xh.inputRequired())
			}
		}
		out := fixContentTypes([]byte(result))
		if json.Valid([]byte(result)) && !json.Valid(out) {
			t.Fatalf("fixContentTypes(%s) = %s", result, out)
		}
		p := stripRefPrefix(json.RawMessage(result))
		if json.Valid([]byte(result)) && !json.Valid(p) {
			t.Fatalf("stripRefPrefix(%s) = %s", result, p)
		}
		_ = withoutMember([]byte(result), "timeout")
	})
}
