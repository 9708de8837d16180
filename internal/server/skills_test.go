package server

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkillsAndExtensions serves a [[skills]] directory through the real
// server on stdio, legacy and 2026-07-28: both extensions are advertised,
// skills/list and skills/get give the digests, resources/read the bytes.
func TestSkillsAndExtensions(t *testing.T) {
	dir := t.TempDir()
	md := "---\nname: tidy\ndescription: Keep things tidy\n---\n# Tidy\n"
	if err := os.MkdirAll(filepath.Join(dir, "skills", "tidy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "skills", "tidy", "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := buildServer(t, testLimits+"[[skills]]\ndir = \"./skills\"\n", dir, Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(md))
	digest := "sha256:" + hex.EncodeToString(sum[:])
	modern := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}}
	c := startStdio(t, srv)
	disc := c.call("server/discover", modern)
	for _, want := range []string{`"io.modelcontextprotocol/ui"`, `"io.modelcontextprotocol/skills"`, `"io.modelcontextprotocol/tasks"`} {
		if !strings.Contains(string(disc.Result), want) {
			t.Fatalf("discover lacks %s: %s", want, disc.Result)
		}
	}
	list := c.call("skills/list", modern)
	if !strings.Contains(string(list.Result), `"uri":"skill://tidy/SKILL.md"`) || !strings.Contains(string(list.Result), digest) ||
		!strings.Contains(string(list.Result), `"resultType":"complete"`) {
		t.Fatalf("skills/list = %s %v", list.Result, list.Error)
	}
	get := map[string]any{"uri": "skill://tidy/SKILL.md", "_meta": modern["_meta"]}
	if r := c.call("skills/get", get); !strings.Contains(string(r.Result), digest) {
		t.Fatalf("skills/get = %s %v", r.Result, r.Error)
	}
	get["uri"] = "skill://nope/SKILL.md"
	if r := c.call("skills/get", get); r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("skills/get of an unknown skill = %s %v", r.Result, r.Error)
	}

	l := startSession(t, srv)
	if r := l.call("resources/read", map[string]any{"uri": "skill://tidy/SKILL.md"}); !strings.Contains(string(r.Result), "# Tidy") {
		t.Fatalf("legacy resources/read = %s %v", r.Result, r.Error)
	}
	if r := l.call("skills/list", map[string]any{}); !strings.Contains(string(r.Result), digest) {
		t.Fatalf("legacy skills/list = %s %v", r.Result, r.Error)
	}
}
