package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeStopsOnRequiredPluginFailure: serve answers before its plugins
// have loaded, but a [[plugins]] entry that fails to load still stops it
// with exit code 2 and the reason, while the client's stdin is still open.
func TestServeStopsOnRequiredPluginFailure(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.wasm")
	if err := os.WriteFile(bad, []byte("\x00asm\x01\x00\x00\x00garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "wasmcp.toml")
	if err := os.WriteFile(cfgPath, []byte("[server]\nkv_dir = \":memory:\"\n[[plugins]]\nname = \"bad\"\npath = \""+bad+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", cfgPath)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("exit: %v, want code 2\n%s", err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "bad.wasm") {
			t.Errorf("stderr does not name the plugin:\n%s", stderr.String())
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("serve still running a minute after a required plugin failed\n%s", stderr.String())
	}
}
