package server

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// templateManifest is a liar manifest with one resource template of n
// reserved variables ({+v0}{+v1}...: every split of a URI matches, the
// costliest kind to match).
func templateManifest(n int) string { return templatesManifest(1, n) }

// templatesManifest is templateManifest with k such templates (x0://h/...,
// x1://h/...).
func templatesManifest(k, n int) string {
	var ts []string
	for j := range k {
		var b strings.Builder
		fmt.Fprintf(&b, "x%d://h/", j)
		if k == 1 {
			b.Reset()
			b.WriteString("x://h/")
		}
		for i := range n {
			fmt.Fprintf(&b, "{+v%d}", i)
		}
		ts = append(ts, `{"uriTemplate":"`+b.String()+`","name":"t`+fmt.Sprint(j)+`"}`)
	}
	return `{"abi":1,"tools":[{"name":"liar_ok"}],"resourceTemplates":[` + strings.Join(ts, ",") + `]}`
}

// TestTemplateMatchBounded: matching a resources/read URI against the
// plugins' templates is bounded. Before, a template of 200 variables
// loaded and a 100 KB URI cost 3.5-4.6 s of CPU per resources/read (the
// URI was matched, with every submatch, twice); now a template has at
// most 16 variables (refused at load, naming the limit), a read's URI at
// most max_uri (8 KiB, -32602), and the worst allowed pair is matched once
// a request, without submatches, in milliseconds.
func TestTemplateMatchBounded(t *testing.T) {
	e := newHostileEnv(t)
	liar := func(manifest string) string {
		return memKV + corpusTOML(t, "liar", "[plugins.grants]", "config = { manifest = '"+manifest+"' }")
	}
	t.Run("too many variables", func(t *testing.T) {
		_, err := newHostileServer(t, e, liar(templateManifest(200)))
		checkRefused(t, err, "resourceTemplates[0]", "at most 16")
	})
	// Each template is within its bound, but a URI matching none would be
	// tried against all of them.
	t.Run("too many variables in all", func(t *testing.T) {
		_, err := newHostileServer(t, e, liar(templatesManifest(5, 16)))
		checkRefused(t, err, "resource templates", "at most 64 per plugin")
	})

	srv, err := newHostileServer(t, e, liar(templateManifest(16)))
	if err != nil {
		t.Fatal(err)
	}
	c := startSession(t, srv)
	tests := []struct {
		name     string
		uri      string
		reads    int
		wantCode int           // 0: any answer but -32602
		maxCPU   time.Duration // for all the reads
	}{
		{"URI over max_uri", "x://h/" + strings.Repeat("a/", 50<<10), 5, -32602, 2 * time.Second},
		{"longest URI, worst template", "x://h/" + strings.Repeat("a/", 4<<10-8), 20, 0, 4 * time.Second},
		{"longest URI, no match", "y://h/" + strings.Repeat("a/", 4<<10-8), 20, 0, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := cpuTime(t)
			for range tc.reads {
				r := c.call("resources/read", map[string]any{"uri": tc.uri})
				switch {
				case tc.wantCode != 0 && (r.Error == nil || r.Error.Code != tc.wantCode || !strings.Contains(r.Error.Message, "at most 8192")):
					t.Fatalf("resources/read of %d bytes: %+v, want %d naming the limit", len(tc.uri), r.Error, tc.wantCode)
				case tc.wantCode == 0 && r.Error != nil && r.Error.Code == -32602:
					t.Fatalf("resources/read of %d bytes: %+v", len(tc.uri), r.Error)
				}
			}
			used := cpuTime(t) - before
			t.Logf("%d reads of a %d-byte URI: %v of CPU", tc.reads, len(tc.uri), used)
			if used > tc.maxCPU {
				t.Errorf("%d reads took %v of CPU, over %v", tc.reads, used, tc.maxCPU)
			}
		})
	}
}
