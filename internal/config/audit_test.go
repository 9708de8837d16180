package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAudit: the [audit] table's defaults, sizes, paths and errors.
func TestAudit(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, doc string
		want      Audit
		errs      []string // substrings, one per problem; nil for success
	}{
		{name: "off", doc: "", want: Audit{MaxSize: 64 << 20, MaxFiles: 5, MaxData: 4 << 10}},
		{name: "defaults", doc: `file = "audit.jsonl"`,
			want: Audit{File: filepath.Join(dir, "audit.jsonl"), MaxSize: 64 << 20, MaxFiles: 5, MaxData: 4 << 10}},
		{name: "stderr not resolved", doc: `file = "stderr"`, want: Audit{File: "stderr", MaxSize: 64 << 20, MaxFiles: 5, MaxData: 4 << 10}},
		{name: "dash not resolved", doc: `file = "-"`, want: Audit{File: "-", MaxSize: 64 << 20, MaxFiles: 5, MaxData: 4 << 10}},
		{name: "all set", doc: "file = \"/var/log/a.jsonl\"\nmax_size = \"1MiB\"\nmax_files = 10\ninclude_data = true\nmax_data = 512",
			want: Audit{File: "/var/log/a.jsonl", MaxSize: 1 << 20, MaxFiles: 10, IncludeData: true, MaxData: 512}},
		{name: "bad size unit", doc: "file = \"a\"\nmax_size = \"64MB\"", errs: []string{`write "64MiB"`}},
		{name: "bounds", doc: "file = \"a\"\nmax_size = \"1KiB\"\nmax_files = 0\nmax_data = \"2MiB\"",
			errs: []string{"audit.max_size: 1KiB is less than 4KiB", "audit.max_files: 0 is not between 1 and 1000", "audit.max_data: 2MiB is not between 1B and 1MiB"}},
		{name: "zero data", doc: "file = \"a\"\nmax_data = 0\nmax_files = 1001", errs: []string{"audit.max_data: 0B", "audit.max_files: 1001"}},
		{name: "data without file", doc: "include_data = true", errs: []string{"audit: include_data needs file"}},
		{name: "spaces", doc: `file = " a.jsonl"`, errs: []string{"audit.file"}},
		{name: "unknown key", doc: `files = "a"`, errs: []string{"audit.files"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte("[audit]\n"+c.doc+"\n"), dir)
			if err == nil {
				err = cfg.Validate()
			}
			if c.errs == nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if cfg.Audit != c.want {
					t.Fatalf("audit = %+v, want %+v", cfg.Audit, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse = nil, want errors %q", c.errs)
			}
			for _, w := range c.errs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Parse = %v\nwant it to contain %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "\n") + 1; n != len(c.errs) {
				t.Errorf("%d problems, want %d:\n%v", n, len(c.errs), err)
			}
		})
	}
}
