package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadDirDigestsAndFrontmatter(t *testing.T) {
	dir := t.TempDir()
	md := "---\nname: git-flow\ndescription: \"Branch: and commit\"\nlicense: MIT\nmetadata:\n  version: 2\n  tags: [a, 'b c']\n---\n# Body\n"
	write(t, dir, map[string]string{"git-flow/SKILL.md": md, "git-flow/refs/GUIDE.md": "guide", "notaskill/README": "x"})
	got, err := LoadDir(dir)
	if err != nil || len(got) != 1 {
		t.Fatalf("LoadDir = %v, %v", got, err)
	}
	set, err := NewSet(got)
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		URI         string         `json:"uri"`
		Frontmatter map[string]any `json:"frontmatter"`
		Resources   []struct {
			URI, Digest string
			Size        int
		} `json:"resources"`
	}
	if err := json.Unmarshal(set.Entries()[0], &e); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(md))
	if e.URI != "skill://git-flow/SKILL.md" || len(e.Resources) != 2 || e.Resources[0].URI != e.URI ||
		e.Resources[0].Digest != "sha256:"+hex.EncodeToString(sum[:]) || e.Resources[0].Size != len(md) ||
		e.Resources[1].URI != "skill://git-flow/refs/GUIDE.md" || e.Resources[1].Size != 5 {
		t.Fatalf("entry = %s", set.Entries()[0])
	}
	if e.Frontmatter["description"] != "Branch: and commit" || e.Frontmatter["license"] != "MIT" {
		t.Fatalf("frontmatter = %v", e.Frontmatter)
	}
	if !strings.Contains(string(set.Entries()[0]), `"metadata":{"version":2,"tags":["a","b c"]}`) {
		t.Fatalf("metadata not verbatim: %s", set.Entries()[0])
	}
	res, ok := set.Read("skill://git-flow/refs/GUIDE.md")
	if !ok || !strings.Contains(string(res), `"text":"guide"`) {
		t.Fatalf("Read = %s %v", res, ok)
	}
	if _, ok := set.Read("skill://git-flow/../x"); ok {
		t.Fatal("read an unlisted URI")
	}
}

func TestLoadDirRefuses(t *testing.T) {
	ok := "---\nname: %s\ndescription: d\n---\n"
	tests := []struct {
		name  string
		files map[string]string
		link  bool
		want  string
	}{
		{"name differs from dir", map[string]string{"a/SKILL.md": strings.Replace(ok, "%s", "b", 1)}, false, "differs"},
		{"bad name", map[string]string{"A/SKILL.md": strings.Replace(ok, "%s", "A", 1)}, false, "lower-case"},
		{"no front matter", map[string]string{"a/SKILL.md": "# hi"}, false, "no front matter"},
		{"no description", map[string]string{"a/SKILL.md": "---\nname: a\n---\n"}, false, "description"},
		{"block sequence", map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\ntags:\n  - x\n---\n"}, false, "key: value"},
		{"symlink", map[string]string{"a/SKILL.md": strings.Replace(ok, "%s", "a", 1)}, true, "symbolic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, tc.files)
			if tc.link {
				if err := os.Symlink("/etc/passwd", filepath.Join(dir, "a", "leak")); err != nil {
					t.Skip(err)
				}
			}
			got, err := LoadDir(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || len(got) != 0 {
				t.Fatalf("LoadDir = %v, %v; want error with %q", got, err, tc.want)
			}
		})
	}
}

func TestLimitsAndCollisions(t *testing.T) {
	files := map[string][]byte{"SKILL.md": []byte("---\nname: big\ndescription: d\n---\n")}
	for i := range MaxFiles {
		files["f/"+strings.Repeat("x", 1)+string(rune('a'+i%26))+"/"+itoa(i)] = nil
	}
	if _, err := New("", files, "test"); !errors.Is(err, ErrLimit) {
		t.Fatalf("513 files: %v", err)
	}
	big := map[string][]byte{"SKILL.md": []byte("---\nname: big\ndescription: d\n---\n"), "blob": make([]byte, MaxBytes)}
	if _, err := New("", big, "test"); !errors.Is(err, ErrLimit) {
		t.Fatalf("over 16 MiB: %v", err)
	}
	if _, err := New("", map[string][]byte{"SKILL.md": files["SKILL.md"], "../x": nil}, "test"); err == nil {
		t.Fatal("accepted ../x")
	}
	a, _ := New("", map[string][]byte{"SKILL.md": files["SKILL.md"]}, "one")
	b, _ := New("", map[string][]byte{"SKILL.md": files["SKILL.md"]}, "two")
	set, err := NewSet([]*Skill{a, b})
	if err == nil || !strings.Contains(err.Error(), "one") || !strings.Contains(err.Error(), "two") || len(set.Skills()) != 0 {
		t.Fatalf("collision: %v, %d served", err, len(set.Skills()))
	}
	p, err := New("acme/", map[string][]byte{"SKILL.md": files["SKILL.md"]}, "plugin")
	if err != nil || p.URI != "skill://acme/big/SKILL.md" {
		t.Fatalf("prefixed: %v %v", p, err)
	}
}

func itoa(i int) string {
	return string(rune('0'+i/100%10)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10))
}

func FuzzParseSkillMD(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: d\nmetadata:\n  k: [1, \"x\"]\n---\n"))
	f.Add([]byte("---\n'name': 'a'\ndescription: \"\\u0041\"\n---"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fm, name, _, err := parseSkillMD(b)
		if err != nil {
			return
		}
		var m map[string]any
		if json.Unmarshal(fm, &m) != nil || m["name"] != name || checkName(name) != nil {
			t.Fatalf("accepted %q as %s", b, fm)
		}
	})
}

// TestDirectory lists directory resources: the skill root, a directory
// inside the skill, the levels of a prefixed skill path; files and
// unknown URIs are no directories.
func TestDirectory(t *testing.T) {
	md := func(name string) []byte { return []byte("---\nname: " + name + "\ndescription: d\n---\n") }
	a, err := New("", map[string][]byte{"SKILL.md": md("pdf"), "templates/invoice.md": []byte("i"), "templates/regional/eu.md": []byte("e")}, "t")
	if err != nil {
		t.Fatal(err)
	}
	b, err := New("acme/billing/", map[string][]byte{"SKILL.md": md("refunds")}, "t")
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet([]*Skill{a, b})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		uri  string
		want []string // uri mimeType of each child
		ok   bool
	}{
		{"skill://pdf", []string{"skill://pdf/SKILL.md text/markdown", "skill://pdf/templates inode/directory"}, true},
		{"skill://pdf/templates", []string{"skill://pdf/templates/invoice.md text/markdown", "skill://pdf/templates/regional inode/directory"}, true},
		{"skill://pdf/templates/regional", []string{"skill://pdf/templates/regional/eu.md text/markdown"}, true},
		{"skill://acme", []string{"skill://acme/billing inode/directory"}, true},
		{"skill://acme/billing/refunds", []string{"skill://acme/billing/refunds/SKILL.md text/markdown"}, true},
		{"skill://pdf/SKILL.md", nil, false},
		{"skill://pdf/", nil, false},
		{"skill://nope", nil, false},
	}
	for _, tt := range tests {
		kids, ok := set.Directory(tt.uri)
		var got []string
		for _, k := range kids {
			var r struct{ URI, MimeType, Name string }
			if err := json.Unmarshal(k, &r); err != nil || r.Name == "" {
				t.Fatalf("%s: child %s: %v", tt.uri, k, err)
			}
			got = append(got, r.URI+" "+r.MimeType)
		}
		if ok != tt.ok || strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("Directory(%q) = %q, %v; want %q, %v", tt.uri, got, ok, tt.want, tt.ok)
		}
	}
}

// TestExampleSkills loads examples/skills, the directory the bundled
// wasmcp.toml serves: both skills load, with their supporting files.
func TestExampleSkills(t *testing.T) {
	got, err := LoadDir("../../examples/skills")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, fmt.Sprintf("%s:%d", s.Name, len(s.Files)))
	}
	if strings.Join(names, ",") != "date-questions:1,text-cleanup:2" {
		t.Errorf("examples/skills = %v", names)
	}
}
