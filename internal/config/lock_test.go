package config

import (
	"strings"
	"testing"
)

func TestLockRoundTrip(t *testing.T) {
	l := &Lock{Version: 1, Plugins: []LockEntry{{Name: "time", URL: "oci://h/r:1", Digest: "sha256:" + strings.Repeat("a", 64), SHA256: strings.Repeat("b", 64),
		Grants: Grants{HTTP: []string{"https://api.example/"}, KV: true, FS: []Mount{{Host: "/h", Guest: "/d", Mode: "ro"}}}}}}
	b, err := l.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseLock(b)
	if err != nil {
		t.Fatalf("ParseLock: %v\n%s", err, b)
	}
	if e := got.Entry("time"); e == nil || e.Digest != l.Plugins[0].Digest || !e.Grants.KV || len(e.Grants.FS) != 1 {
		t.Fatalf("round trip = %+v", got)
	}
	for _, bad := range []string{"[[plugins]]\nname = \"x\"\n", "version = 1\nextra = 2\n", "[[plugins]]\nname = \"time\"\nurl = \"u\"\ndigest = \"sha256:x\"\nsha256 = \"" + strings.Repeat("b", 64) + "\"\n"} {
		if _, err := ParseLock([]byte(bad)); err == nil {
			t.Errorf("ParseLock(%q) accepted it", bad)
		}
	}
}

func TestWidenedGrants(t *testing.T) {
	was := Grants{HTTP: []string{"https://api.example/"}, KV: true, Env: map[string]string{"A": "1"}, FS: []Mount{{Host: "/h", Guest: "/d", Mode: "ro"}}}
	for _, c := range []struct {
		name string
		now  Grants
		want string
	}{
		{"same", was, ""},
		{"narrower", Grants{HTTP: []string{"https://api.example/v1/"}}, ""},
		{"new host", Grants{HTTP: []string{"https://evil.example/"}}, "+ http https://evil.example/"},
		{"sampling", Grants{Sampling: true}, "+ sampling"},
		{"env value", Grants{Env: map[string]string{"A": "2", "B": "x"}}, "+ env B, ~ env A (value changed)"},
		{"rw", Grants{FS: []Mount{{Host: "/h", Guest: "/d", Mode: "rw"}}}, "~ fs /h -> /d ro -> rw"},
		{"new mount", Grants{FS: []Mount{{Host: "/etc", Guest: "/etc", Mode: "ro"}}}, "+ fs /etc -> /etc (ro)"},
	} {
		got := strings.Join(WidenedGrants(&was, &c.now), ", ")
		if got != c.want {
			t.Errorf("%s: WidenedGrants = %q, want %q", c.name, got, c.want)
		}
	}
}

func FuzzParseLock(f *testing.F) {
	f.Add([]byte("version = 1\n[[plugins]]\nname = \"a\"\nurl = \"oci://h/r:1\"\ndigest = \"sha256:" + strings.Repeat("0", 64) + "\"\nsha256 = \"" + strings.Repeat("0", 64) + "\"\n[plugins.grants]\nkv = true\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLock(b)
		if err != nil {
			return
		}
		if _, err := l.Encode(); err != nil {
			t.Fatalf("a parsed lock does not encode: %v", err)
		}
	})
}

// TestLockDuplicate: two entries for one plugin are refused by name,
// whether their digests differ (which one would load?) or not.
func TestLockDuplicate(t *testing.T) {
	entry := func(name, digestHex string) string {
		return "[[plugins]]\nname = \"" + name + "\"\nurl = \"oci://h/r:1\"\ndigest = \"sha256:" + strings.Repeat(digestHex, 64) + "\"\nsha256 = \"" + strings.Repeat("c", 64) + "\"\n"
	}
	for _, c := range []struct {
		name, lock string
		want       []string // in the error; nil: accepted
	}{
		{"two plugins", "version = 1\n" + entry("time", "a") + entry("echo", "b"), nil},
		{"different digests", "version = 1\n" + entry("time", "a") + entry("echo", "b") + entry("time", "d"),
			[]string{`"time"`, "plugins[0]", "plugins[2]", "sha256:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("d", 64)}},
		{"same digest", "version = 1\n" + entry("time", "a") + entry("time", "a"), []string{`"time"`, "plugins[0]", "plugins[1]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseLock([]byte(c.lock))
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("ParseLock accepted two entries for one plugin")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

// TestLockPins: [[pins]] round-trip, and a lock whose pins conflict or
// were edited by hand is refused with an error naming the entry.
func TestLockPins(t *testing.T) {
	def := `{"description":"Says ok.","name":"ok"}`
	item := PinnedItem{Kind: "tool", Name: "ok", Digest: DefinitionDigest(def), Definition: def}
	l := &Lock{Version: LockVersion, Pins: []PinEntry{{Plugin: "liar", SHA256: strings.Repeat("c", 64), Items: []PinnedItem{item}}, {Plugin: "empty"}}}
	b, err := l.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseLock(b)
	if err != nil {
		t.Fatalf("ParseLock: %v\n%s", err, b)
	}
	if p := got.Pin("liar"); p == nil || len(p.Items) != 1 || p.Items[0] != item || got.Pin("empty") == nil || got.Pin("other") != nil {
		t.Fatalf("round trip = %+v", got.Pins)
	}
	entry := func(plugin string, items ...string) string {
		s := "[[pins]]\nplugin = \"" + plugin + "\"\nsha256 = \"\"\n"
		for _, it := range items {
			s += "[[pins.items]]\n" + it
		}
		return s
	}
	ok := "kind = \"tool\"\nname = \"ok\"\ndigest = \"" + item.Digest + "\"\ndefinition = '" + def + "'\n"
	for _, c := range []struct{ name, text, want string }{
		{"two entries of a plugin", entry("liar", ok) + entry("liar"), `plugin "liar" has two entries`},
		{"an item twice", entry("liar", ok, ok), `tool "ok" is listed twice`},
		{"digest edited", entry("liar", strings.Replace(ok, item.Digest, DefinitionDigest("{}"), 1)), "is not that of its definition"},
		{"definition edited", entry("liar", strings.Replace(ok, "Says ok.", "Says more.", 1)), "is not that of its definition"},
		{"unknown kind", entry("liar", strings.Replace(ok, `"tool"`, `"widget"`, 1)), `kind "widget" is not one of`},
		{"no name", entry("liar", strings.Replace(ok, `name = "ok"`, `name = ""`, 1)), "name is required"},
		{"bad plugin name", entry("bad name!", ok), "is not a plugin name"},
		{"unknown key", entry("liar", ok+"extra = 1\n"), "extra"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseLock([]byte("version = 2\n" + c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseLock = %v, want an error with %q", err, c.want)
			}
		})
	}
}
