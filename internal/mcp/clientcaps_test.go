package mcp_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/mcp"
)

// TestKeptCapabilities: a session keeps only the capabilities the server
// and the plugins' contexts read, in bounded form, whatever the client
// sent.
func TestKeptCapabilities(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	manyExt := map[string]any{}
	for i := range 40 {
		manyExt[fmt.Sprintf("ext/%02d", i)] = map[string]any{}
	}
	tests := []struct {
		name string
		caps any
		want string
	}{
		{"none", map[string]any{}, `{}`},
		{"not an object", []any{1}, `{}`},
		{"core", map[string]any{"roots": map[string]any{"listChanged": true}, "sampling": map[string]any{}, "elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}},
			`{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}}`},
		{"null is not declared", map[string]any{"sampling": nil, "roots": map[string]any{}}, `{"roots":{}}`},
		{"unknown and experimental dropped", map[string]any{"experimental": map[string]any{"blob": big}, "zzz": big, "elicitation": map[string]any{"form": map[string]any{"x": big}}},
			`{"elicitation":{"form":{}}}`},
		{"tasks", map[string]any{"tasks": map[string]any{"list": map[string]any{}, "requests": map[string]any{"sampling": map[string]any{"createMessage": map[string]any{}}, "x": big}}},
			`{"tasks":{"list":{},"requests":{"sampling":{"createMessage":{}}}}}`},
		{"extension settings kept when small", map[string]any{"extensions": map[string]any{mcp.ExtUI: map[string]any{"mimeTypes": []string{mcp.UIMimeType}}}},
			`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`},
		{"big extension settings become {}", map[string]any{"extensions": map[string]any{mcp.ExtTasks: map[string]any{"x": big}, strings.Repeat("i", 200): map[string]any{}}},
			`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.Marshal(tc.caps)
			if got := string(mcp.KeptCapabilities(raw)); got != tc.want {
				t.Errorf("kept %.300s, want %s", got, tc.want)
			}
		})
	}
	raw, _ := json.Marshal(map[string]any{"extensions": manyExt, "roots": map[string]any{}})
	got := mcp.KeptCapabilities(raw)
	var m struct{ Extensions map[string]any }
	if err := json.Unmarshal(got, &m); err != nil || len(m.Extensions) != 16 || len(got) > 1024 {
		t.Errorf("40 extensions: kept %d (%d bytes, %v), want 16", len(m.Extensions), len(got), err)
	}
	info, _ := json.Marshal(map[string]any{"name": "héllo" + big, "version": "1", "icons": []any{big}})
	if ki := mcp.KeptClientInfo(info); len(ki) > 300 || !json.Valid(ki) || strings.Contains(string(ki), "icons") {
		t.Errorf("clientInfo kept as %.200s (%d bytes)", ki, len(ki))
	}
}

// TestSessionCapabilitiesBounded: legacy HTTP sessions whose initialize
// carries tens of KiB of capabilities and clientInfo keep a few hundred
// bytes each (before: every byte, kept whole for the session's life: 260
// sessions of 3.5 MB passed 1 GiB), and an initialize past its 64 KiB
// limit is refused with -32602 (before: accepted up to the 4 MiB body
// limit).
func TestSessionCapabilitiesBounded(t *testing.T) {
	e := startHTTP(t, nil, nil)
	pad := strings.Repeat("x", 12<<10)
	caps := map[string]any{
		"experimental": map[string]any{"a": pad},
		"sampling":     map[string]any{"b": pad},
		"roots":        map[string]any{"listChanged": true, "c": pad},
		"extensions":   map[string]any{mcp.ExtUI: map[string]any{"d": pad}},
	}
	initialize := func(id int, caps any, name string) *msg {
		resp := e.post(request(id, "initialize", map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": map[string]any{"name": name, "version": "1"},
		}), nil)
		return lastMsg(t, resp)
	}

	t.Run("over the initialize limit", func(t *testing.T) {
		huge := map[string]any{"experimental": map[string]any{"a": strings.Repeat("y", 100<<10)}}
		m := initialize(1, huge, "t")
		if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "at most 65536") {
			t.Fatalf("a 100 KiB initialize: %s", m.raw)
		}
	})
	t.Run("many sessions", func(t *testing.T) {
		const sessions = 300 // ~60 KiB each: 18 MiB kept before
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range sessions {
			if m := initialize(i+10, caps, pad+fmt.Sprint(i)); m.Error != nil {
				t.Fatalf("initialize %d: %s", i, m.raw)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		growth := int64(after.HeapInuse) - int64(before.HeapInuse)
		t.Logf("heap in use: %d KiB before, %d KiB after %d sessions of %d KiB of capabilities (%+d KiB)",
			before.HeapInuse>>10, after.HeapInuse>>10, sessions, 4*len(pad)>>10, growth>>10)
		if growth > 8<<20 {
			t.Errorf("heap grew by %d KiB for %d sessions", growth>>10, sessions)
		}
		// What was kept still serves: the session declared sampling.
		h := e.legacySession("2025-11-25", caps)
		m := lastMsg(t, e.post(request(2, "tools/call", map[string]any{"name": "missing_capability", "arguments": map[string]any{}}), h))
		if m.Error != nil || !strings.Contains(string(m.Result), "sampling declared") {
			t.Fatalf("a tool needing sampling: %s", m.raw)
		}
	})
}

// FuzzKeptCapabilities: whatever JSON a client sends as its capabilities
// or clientInfo, what a session keeps is valid JSON, an object, within a
// few KiB, and kept again unchanged (the session store's read-back
// bounds it again).
func FuzzKeptCapabilities(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `"x"`,
		`{"roots":{"listChanged":true},"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}}}`,
		`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]},"a\u00e9\"b":{}}}`,
		`{"tasks":{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}},"roots":null,"extensions":{"x":null}}`,
		`{"name":"n\ud800","version":"1","title":"t","icons":[{}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		caps := mcp.KeptCapabilities(data)
		if !json.Valid(caps) || caps[0] != '{' || len(caps) > 16*(128*6+256+8)+512 {
			t.Fatalf("kept capabilities %q of %q", caps, data)
		}
		if again := mcp.KeptCapabilities(caps); string(again) != string(caps) {
			t.Fatalf("kept twice: %q, then %q", caps, again)
		}
		info := mcp.KeptClientInfo(data)
		if info == nil {
			return
		}
		if !json.Valid(info) || info[0] != '{' || len(info) > 5*(256*6+16)+2 {
			t.Fatalf("kept clientInfo %q of %q", info, data)
		}
		if again := mcp.KeptClientInfo(info); string(again) != string(info) {
			t.Fatalf("clientInfo kept twice: %q, then %q", info, again)
		}
	})
}
