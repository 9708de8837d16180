package server

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSkillsDirReload: with [server] watch = true a [[skills]] directory
// is read again as it changes, as plugin files are: a skill added, one
// edited (its digest follows its bytes) and one removed show in
// skills/list, and a legacy session is told with
// notifications/resources/list_changed. A SKILL.md that stops parsing is
// logged and leaves the others served.
func TestSkillsDirReload(t *testing.T) {
	dir := t.TempDir()
	write := func(name, md string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, "skills", name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "skills", name, "SKILL.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	skill := func(name, body string) string {
		return "---\nname: " + name + "\ndescription: The " + name + " skill\n---\n" + body + "\n"
	}
	digest := func(md string) string {
		sum := sha256.Sum256([]byte(md))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	write("tidy", skill("tidy", "# Tidy"))
	srv, err := buildServer(t, strings.Replace(testLimits, "[server]\n", "[server]\nwatch = true\n", 1)+"[[skills]]\ndir = \"./skills\"\n", dir,
		Options{Version: "test", WatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := startSession(t, srv)
	// until polls skills/list, bounded, until ok holds for its result.
	until := func(what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			r := c.call("skills/list", map[string]any{})
			if r.Error == nil && ok(string(r.Result)) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: skills/list still %s %v after 20 s", what, r.Result, r.Error)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	listChanged := func(what string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case n := <-c.notes:
				if strings.Contains(string(n), "notifications/resources/list_changed") {
					return
				}
			case <-deadline:
				t.Fatalf("%s: no notifications/resources/list_changed", what)
			}
		}
	}
	until("at start", func(s string) bool { return strings.Contains(s, digest(skill("tidy", "# Tidy"))) })

	write("neat", skill("neat", "# Neat"))
	listChanged("a skill added")
	until("a skill added", func(s string) bool {
		return strings.Contains(s, "skill://neat/SKILL.md") && strings.Contains(s, digest(skill("neat", "# Neat")))
	})

	write("tidy", skill("tidy", "# Tidy, edited"))
	listChanged("a skill edited")
	until("a skill edited", func(s string) bool {
		return strings.Contains(s, digest(skill("tidy", "# Tidy, edited"))) && !strings.Contains(s, digest(skill("tidy", "# Tidy")))
	})

	// A skill whose front matter does not parse is left out (and
	// logged); the others stay.
	write("broken", "no front matter at all\n")
	write("later", skill("later", "# Later"))
	until("a broken skill beside a new one", func(s string) bool {
		return strings.Contains(s, "skill://later/SKILL.md") && !strings.Contains(s, "skill://broken/") && strings.Contains(s, "skill://tidy/SKILL.md")
	})

	if err := os.RemoveAll(filepath.Join(dir, "skills", "neat")); err != nil {
		t.Fatal(err)
	}
	listChanged("a skill removed")
	until("a skill removed", func(s string) bool {
		return !strings.Contains(s, "skill://neat/") && strings.Contains(s, "skill://tidy/SKILL.md")
	})
	if r := c.call("resources/read", map[string]any{"uri": "skill://tidy/SKILL.md"}); !strings.Contains(string(r.Result), "Tidy, edited") {
		t.Fatalf("resources/read after the edit = %s %v", r.Result, r.Error)
	}
}
