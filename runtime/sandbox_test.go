package runtime

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

type sandboxReport struct {
	FS, Root, Cwd    string
	Env, Args        []string
	HTTP, KV, Config int32
}

// TestSandboxDeniesByDefault: with no grants a plugin sees no files (an
// empty /), no
// environment, no arguments, and the host denies http/fetch and kv.
func TestSandboxDeniesByDefault(t *testing.T) {
	p := newPool(t, goPlugin, Limits{}, Sandbox{})
	_, out, err := p.Call(context.Background(), []byte(`{"method":"sandbox"}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var r sandboxReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	// / (and the working directory, /) is the empty tree outside every
	// mount (mountfs_outside.go); /etc/passwd does not exist in it.
	if !strings.Contains(r.FS, "No such file or directory") || r.Root != "0 entries" || r.Cwd != "0 entries" {
		t.Errorf("file system reachable: %+v", r)
	}
	if len(r.Env) != 0 || len(r.Args) != 0 {
		t.Errorf("env %q args %q, want none", r.Env, r.Args)
	}
	if r.HTTP != -1 || r.KV != -1 || r.Config != -1 {
		t.Errorf("host calls http %d kv %d config %d, want -1 (denied)", r.HTTP, r.KV, r.Config)
	}
}

func TestSandboxGrants(t *testing.T) {
	ro, rw := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ro, "a.txt"), []byte("read me"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newPool(t, goPlugin, Limits{}, Sandbox{
		Env:    map[string]string{"TZ": "UTC"},
		Mounts: []Mount{{HostPath: ro, GuestPath: "/ro", ReadOnly: true}, {HostPath: rw, GuestPath: "/rw"}},
	})
	call := func(in string) map[string]any {
		t.Helper()
		_, out, err := p.Call(context.Background(), []byte(in), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		return m
	}
	if data, _, writeErr := readFile(t, p, "/ro/a.txt"); data != "read me" || writeErr == "" {
		t.Errorf("read-only mount: %q, write error %q", data, writeErr)
	}
	if _, err := os.Stat(filepath.Join(ro, "a.txt.new")); err == nil {
		t.Error("wrote through a read-only mount")
	}
	if _, _, writeErr := readFile(t, p, "/rw/a.txt"); writeErr != "" {
		t.Errorf("read-write mount: %s", writeErr)
	}
	if _, err := os.Stat(filepath.Join(rw, "a.txt.new")); err != nil {
		t.Errorf("read-write mount not written: %v", err)
	}
	if data, readErr, _ := readFile(t, p, "/ro/../../etc/passwd"); data != "" || readErr == "" {
		t.Errorf("escaped the mount: %q, read error %q", data, readErr)
	}
	r := call(`{"method":"sandbox"}`)
	if env, _ := r["env"].([]any); len(env) != 1 || env[0] != "TZ=UTC" {
		t.Errorf("env %v, want only TZ=UTC", r["env"])
	}
}

// TestSandboxClockAndRandom: real wall clock, working sleep, and crypto
// randomness that differs between instances.
func TestSandboxClockAndRandom(t *testing.T) {
	seen := map[string]bool{}
	for range 2 {
		p := newPool(t, goPlugin, Limits{}, Sandbox{})
		_, out, err := p.Call(context.Background(), []byte(`{"method":"time"}`), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Unix    int64  `json:"unix"`
			SleptMS int64  `json:"slept_ms"`
			Rand    string `json:"rand"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		if d := time.Now().Unix() - r.Unix; d < 0 || d > 60 {
			t.Errorf("guest clock %d is %ds off", r.Unix, d)
		}
		if r.SleptMS < 20 {
			t.Errorf("slept %dms, want >= 20", r.SleptMS)
		}
		if seen[r.Rand] {
			t.Errorf("random bytes %s repeated across instances", r.Rand)
		}
		seen[r.Rand] = true
	}
}

// TestSleepIsCapped: a guest sleeping for an hour is stopped at the
// deadline.
func TestSleepIsCapped(t *testing.T) {
	p := newPool(t, goPlugin, Limits{Timeout: 300 * time.Millisecond}, Sandbox{})
	stoppedAtDeadline(t, p, `{"method":"sleep"}`, 2300*time.Millisecond)
}

// TestStdioGoesToOutputCapped: stdout and stderr reach Sandbox.Output, at
// most stdioCap bytes each per call, never the process's stdout.
func TestStdioGoesToOutputCapped(t *testing.T) {
	var buf testutil.Buffer
	p := newPool(t, goPlugin, Limits{}, Sandbox{Output: &buf})
	for range 2 {
		_, out, err := p.Call(context.Background(), []byte(`{"method":"stderr"}`), nil, nil)
		if err != nil || string(out) != "{}" {
			t.Fatalf("%q, %v", out, err)
		}
	}
	s := buf.String()
	if n := strings.Count(s, "x"); n != 2*stdioCap {
		t.Errorf("%d bytes of stderr passed, want %d", n, 2*stdioCap)
	}
	if strings.Count(s, "to stdout\n") != 2 {
		t.Errorf("stdout lines missing")
	}
}
