package plugins

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// manifestWith returns a manifest with n tools named t0, t1, ...
func manifestWith(n int) string {
	var b strings.Builder
	b.WriteString(`{"abi":1,"tools":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d"}`, i)
	}
	b.WriteString(`],"resources":[{"uri":"a://x","name":"x"}]}`)
	return b.String()
}

func TestParseManifestLimits(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		limits ManifestLimits
		want   string // in the error; "" loads
	}{
		{"default items: at the limit", manifestWith(DefaultMaxManifestItems - 1), ManifestLimits{}, ""},
		{"default items: over", manifestWith(DefaultMaxManifestItems), ManifestLimits{}, "1001 items (1000 tools, 1 resources, 0 resource templates, 0 prompts), over the limit of 1000 ([limits] max_manifest_items)"},
		{"raised items", manifestWith(5000), ManifestLimits{MaxItems: 6000, MaxBytes: 1 << 20}, ""},
		{"bytes: at the limit", manifestWith(3), ManifestLimits{MaxBytes: len(manifestWith(3))}, ""},
		{"bytes: over", manifestWith(3), ManifestLimits{MaxBytes: len(manifestWith(3)) - 1}, "over the " + fmt.Sprint(len(manifestWith(3))-1) + " byte limit ([limits] max_manifest_bytes)"},
		{"default bytes: over", `{"abi":1,"description":"` + strings.Repeat("x", DefaultMaxManifestBytes) + `"}`, ManifestLimits{}, "max_manifest_bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tc.data), tc.limits)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatal("accepted")
			case tc.want != "":
				if !errors.Is(err, ErrManifestLimit) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %q: want ErrManifestLimit containing %q", err, tc.want)
				}
			}
		})
	}
}

// FuzzParseManifest: ParseManifest never panics, and what it accepts is
// within its limits.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(manifestWith(3)), 2, 1<<10)
	f.Add([]byte(`{"abi":1,"prompts":[{"name":"p"}],"resourceTemplates":[{"uriTemplate":"a://{x}","name":"t"}]}`), 1, 100)
	f.Add([]byte(`{"abi":1,"tools":[{"name":"a"},{"name":"a"}]}`), 10, 1<<20)
	f.Add([]byte(`[`), 0, 0)
	f.Add([]byte("{\"abi\":1,\"tools\":[{\"name\":\"t\",\"description\":\"caf\xff\"}]}"), 10, 1<<10)
	f.Add([]byte("{\"abi\":1,\"description\":\"\xc3\",\"skills\":[{\"files\":{\"SKILL.md\":\"\xed\xa0\x80\"}}]}"), 10, 1<<10)
	f.Fuzz(func(t *testing.T, data []byte, items, size int) {
		l := ManifestLimits{MaxItems: items % 100, MaxBytes: size % (1 << 16)}
		m, err := ParseManifest(data, l)
		if errors.Is(err, ErrManifestEncoding) && utf8.Valid(data) {
			t.Fatalf("valid UTF-8 refused as invalid: %v", err)
		}
		if err != nil {
			return
		}
		if !utf8.Valid(data) {
			t.Fatalf("accepted a manifest that is not valid UTF-8: %q", data)
		}
		l = l.withDefaults()
		if len(data) > l.MaxBytes {
			t.Fatalf("accepted %d bytes over a %d byte limit", len(data), l.MaxBytes)
		}
		if n := len(m.Tools) + len(m.Resources) + len(m.ResourceTemplates) + len(m.Prompts); n > l.MaxItems {
			t.Fatalf("accepted %d items over a limit of %d", n, l.MaxItems)
		}
	})
}

// TestManifestTaskSupport: a tool's execution.taskSupport is one of the
// three values of MCP, or absent.
func TestManifestTaskSupport(t *testing.T) {
	for _, tc := range []struct {
		exec, want string // want "" accepts
	}{
		{``, ""},
		{`,"execution":{}`, ""},
		{`,"execution":{"taskSupport":"forbidden"}`, ""},
		{`,"execution":{"taskSupport":"optional"}`, ""},
		{`,"execution":{"taskSupport":"required"}`, ""},
		{`,"execution":{"taskSupport":"always"}`, `tools[0] ("t"): execution.taskSupport "always": want forbidden, optional or required`},
		{`,"execution":{"taskSupport":true}`, "execution must be an object"},
		{`,"execution":"optional"`, "execution must be an object"},
	} {
		_, err := ParseManifest([]byte(`{"abi":1,"tools":[{"name":"t"`+tc.exec+`}]}`), ManifestLimits{})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.exec, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.exec, err, tc.want)
		}
	}
}

// TestManifestInvalidUTF8: a manifest holding invalid UTF-8 is refused
// with ErrManifestEncoding, naming the item that holds it (its field,
// index and name or uri), else the byte of the manifest.
func TestManifestInvalidUTF8(t *testing.T) {
	for _, tc := range []struct {
		name, manifest, want string
	}{
		{"tool description", "{\"abi\":1,\"tools\":[{\"name\":\"ok\"},{\"name\":\"bad\",\"description\":\"caf\xff\"}]}", `tools[1] "bad", at byte 32 of the item`},
		{"tool name", "{\"abi\":1,\"tools\":[{\"name\":\"b\xffd\"}]}", "tools[0] \"b\uFFFDd\""},
		{"resource", "{\"abi\":1,\"resources\":[{\"uri\":\"a://\xfe\"}]}", "resources[0] \"a://\uFFFD\""},
		{"prompt", "{\"abi\":1,\"prompts\":[{\"name\":\"p\",\"description\":\"\xc3(\"}]}", `prompts[0] "p"`},
		{"skill file", "{\"abi\":1,\"skills\":[{\"files\":{\"SKILL.md\":\"\xff\"}}]}", `skills[0], file "SKILL.md"`},
		{"description", "{\"abi\":1,\"description\":\"\xe2\x82\"}", `at byte 24`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tc.manifest), ManifestLimits{})
			if !errors.Is(err, ErrManifestEncoding) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrManifestEncoding naming %s", err, tc.want)
			}
		})
	}
}
