package server

import (
	"log/slog"
	"strings"
	"testing"
)

// TestTrapSourceInLogOnly: a trap in a plugin built with its name section
// and line table is logged with the guest function and its file:line
// (carried through instrumentation), and the client sees only the short
// message, without either.
func TestTrapSourceInLogOnly(t *testing.T) {
	toml := memKV + corpusTOML(t, "debugtrap")
	logs := &logBuffer{}
	srv := newTestServerWith(t, toml, Options{Version: "test", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	c := startSession(t, srv)
	for _, tc := range []struct {
		tool, message string
		frames        []string // in the log, innermost first
	}{
		{"load", "plugin crashed: out of bounds memory access",
			[]string{".read_past_end(i32) i32", "debugtrap.c:16:", ".load(i32,i32)", "debugtrap.c:25:"}},
		{"abort", "plugin crashed: unreachable",
			[]string{".give_up()", "debugtrap.c:20:", ".abort_(i32,i32)", "debugtrap.c:32:"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			r := c.call("tools/call", map[string]any{"name": tc.tool, "arguments": map[string]any{}})
			if r.Error != nil {
				t.Fatalf("error %+v", r.Error)
			}
			got := string(r.Result)
			if !strings.Contains(got, tc.message) || !strings.Contains(got, `"isError":true`) {
				t.Errorf("result %s, want an error result %q", got, tc.message)
			}
			for _, leak := range []string{"debugtrap.c", "read_past_end", "give_up", "stack trace"} {
				if strings.Contains(got, leak) {
					t.Errorf("the client sees %q: %s", leak, got)
				}
			}
			log := logs.String()
			i := strings.LastIndex(log, `error="`+tc.message+`"`)
			if i < 0 {
				t.Fatalf("no log line for the trap:\n%s", log)
			}
			line := log[i:]
			line = line[:strings.IndexByte(line+"\n", '\n')]
			rest := line
			for _, f := range tc.frames {
				k := strings.Index(rest, f)
				if k < 0 {
					t.Fatalf("log line lacks %q (in order):\n%s", f, line)
				}
				rest = rest[k+len(f):]
			}
		})
	}
}
