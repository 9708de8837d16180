package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestHelpExitsZero: every command's --help and -h prints its flags on
// stdout and exits 0, without an error line.
func TestHelpExitsZero(t *testing.T) {
	for _, cmd := range []string{"serve", "call", "inspect", "new"} {
		for _, flag := range []string{"--help", "-h"} {
			stdout, stderr, code := wasmcp(t, "", cmd, flag)
			if code != 0 || strings.Contains(stderr, "help requested") || strings.Contains(stderr, "wasmcp:") {
				t.Errorf("%s %s: exit %d, stderr %q", cmd, flag, code, stderr)
			}
			if !strings.Contains(stdout, "-") || !strings.Contains(stdout, "Usage of "+cmd) {
				t.Errorf("%s %s: stdout lacks the flags:\n%s", cmd, flag, stdout)
			}
		}
	}
}

// TestVersionOf: the version comes from the build info: the module
// version when there is one, else the VCS revision, else "dev".
func TestVersionOf(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"none", nil, "dev"},
		{"devel, no vcs", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"tag", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"pseudo", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201112233-0123456789ab+dirty"}}, "v0.0.0-20261201112233-0123456789ab+dirty"},
		{"revision", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}}, "dev+0123456789ab"},
		{"modified", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}}, "dev+0123456789ab.dirty"},
	} {
		if got := versionOf(tc.bi); got != tc.want {
			t.Errorf("%s: versionOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestVersionFromBuildInfo: `wasmcp version` and serverInfo.version say
// what the binary's own build info (go version -m) says, for the test
// binary as built here (scripts/test.sh builds with -buildvcs=false) and
// for one built with -buildvcs=true in a clone of this commit (Go stamps
// no VCS information in a git worktree, whose .git is a file).
func TestVersionFromBuildInfo(t *testing.T) {
	if testing.Short() {
		t.Skip("clones the repository and builds the binary again")
	}
	vcsBin := filepath.Join(t.TempDir(), "wasmcp")
	clone := filepath.Join(t.TempDir(), "clone")
	steps := [][]string{
		{"git", "clone", "-q", "--shared", "../..", clone},
		{"go", "build", "-buildvcs=true", "-o", vcsBin, "./cmd/wasmcp"},
	}
	for i, s := range steps {
		c := exec.Command(s[0], s[1:]...)
		if i == 1 {
			c.Dir = clone
		}
		c.Env = append(os.Environ(), "GOFLAGS=")
		if out, err := c.CombinedOutput(); err != nil {
			t.Logf("no VCS build (%v: %s); checking the test binary only", err, out)
			vcsBin = ""
			break
		}
	}
	for _, b := range []string{bin, vcsBin} {
		if b == "" {
			continue
		}
		out, err := exec.Command("go", "version", "-m", b).Output()
		if err != nil {
			t.Fatal(err)
		}
		bi := &debug.BuildInfo{}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) >= 3 && f[0] == "mod":
				bi.Main.Version = f[2]
			case len(f) == 2 && f[0] == "build":
				if k, v, ok := strings.Cut(f[1], "="); ok {
					bi.Settings = append(bi.Settings, debug.BuildSetting{Key: k, Value: v})
				}
			}
		}
		want := versionOf(bi)
		if b == vcsBin && want == "dev" {
			t.Errorf("a -buildvcs=true build in a clone has no version in its build info:\n%s", out)
		}
		cmd := exec.Command(b, "version")
		got, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(got)) != "wasmcp "+want {
			t.Errorf("%s version = %q (%v), want %q", b, got, err, "wasmcp "+want)
		}
		t.Logf("%s: %s", b, want)
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
		serve := exec.Command(b, "serve", "--plugins", t.TempDir())
		serve.Stdin = strings.NewReader(init)
		stdout, _ := serve.Output()
		if !strings.Contains(string(stdout), `"version":"`+want+`"`) {
			t.Errorf("%s serverInfo lacks version %q: %s", b, want, stdout)
		}
	}
}

// TestPluginsFlag: --plugins takes one .wasm file as well as a directory;
// anything else is refused naming it; a --plugins directory from which
// nothing loads is warned about without telling the user to give
// --plugins.
func TestPluginsFlag(t *testing.T) {
	wasm := "examples/c-hash/c-hash.wasm"
	if _, err := os.Stat("../../" + wasm); err != nil {
		t.Skip("examples not built")
	}
	stdout, stderr, code := wasmcp(t, "", "call", "--plugins", wasm, "sha256", `{"text":"abc"}`)
	if code != 0 || !strings.Contains(stdout, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
		t.Errorf("call --plugins FILE: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, tc := range []struct{ arg, want string }{
		{"README.md", "--plugins README.md: neither a directory nor a .wasm file"},
		{"nope.wasm", "--plugins nope.wasm: no such file or directory"},
	} {
		_, stderr, code := wasmcp(t, "", "call", "--plugins", tc.arg, "x")
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("--plugins %s: exit %d, stderr %q, want %q", tc.arg, code, stderr, tc.want)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "junk.wasm"), []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The warning follows the first load, which serve does not wait for:
	// stdin stays open until it is logged (an empty stdin ends serve,
	// sometimes before the load has).
	in, keep := io.Pipe()
	defer keep.Close()
	_, _, errs := startServe(t, in, "--plugins", dir)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errs)
		var seen []string
		for sc.Scan() {
			seen = append(seen, sc.Text())
			if strings.Contains(sc.Text(), "no plugins loaded") {
				found <- strings.Join(seen, "\n")
				return
			}
		}
		found <- "" // serve ended without it
	}()
	select {
	case out := <-found:
		if out == "" || strings.Contains(out, "give --config or --plugins") {
			t.Errorf("serve --plugins with a failing plugin: want the 'no plugins loaded' warning naming the failures; stderr\n%s", out)
		}
	case <-time.After(60 * time.Second):
		t.Error("serve --plugins with a failing plugin: no 'no plugins loaded' warning within 60 s")
	}
}

// TestConfigErrorsNamePlugin: a [[plugins]] file that is missing is
// reported, with exit 2, naming the config file, the entry's line and
// name; a memory written as 0 is refused naming its line.
func TestConfigErrorsNamePlugin(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ config, want string }{
		{"[server]\nname = \"t\"\n\n[[plugins]]\nname = \"weather\"\npath = \"weather.wasm\"\n",
			`line 4: plugins[0] ("weather"): path ` + filepath.Join(dir, "weather.wasm") + ": no such file or directory"},
		{"[limits]\nmemory = \"0\"\n", `line 2: limits.memory: 0 is refused`},
	} {
		cfg := filepath.Join(dir, "wasmcp.toml")
		if err := os.WriteFile(cfg, []byte(tc.config), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range [][]string{{"serve", "--config", cfg}, {"call", "--config", cfg, "x"}} {
			_, stderr, code := wasmcp(t, "", cmd...)
			if code != 2 || !strings.Contains(stderr, "config "+cfg+": "+tc.want) {
				t.Errorf("%s: exit %d, stderr %q, want %q", cmd[0], code, stderr, tc.want)
			}
		}
	}
}

// TestPluginLogNamesPluginOnce: a plugin's log line in the server log
// carries plugin= once (the registry's logger and the host's both added
// it).
func TestPluginLogNamesPluginOnce(t *testing.T) {
	wasm, _ := filepath.Abs("../../examples/go-notes/go-notes.wasm")
	if _, err := os.Stat(wasm); err != nil {
		t.Skip("examples not built")
	}
	cfg := filepath.Join(t.TempDir(), "wasmcp.toml")
	conf := "[server]\nlog_level = \"debug\"\nkv_dir = \":memory:\"\n\n[[plugins]]\nname = \"go-notes\"\npath = \"" + wasm + "\"\n[plugins.grants]\nkv = true\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_note","arguments":{"title":"t","body":"b"}}}
`
	_, stderr, code := wasmcp(t, in, "serve", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	found := false
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "plugin log") {
			found = true
			if n := strings.Count(line, " plugin="); n != 1 {
				t.Errorf("plugin= %d times in %q", n, line)
			}
		}
	}
	if !found {
		t.Fatalf("no plugin log line in:\n%s", stderr)
	}
}

// TestPluginsCommand: `wasmcp plugins` lists each configured plugin with
// its source line, digest, ABI, tools, grants and limits; one that fails
// to load is listed with its error and makes the exit code 1.
func TestPluginsCommand(t *testing.T) {
	wasm, _ := filepath.Abs("../../examples/c-hash/c-hash.wasm")
	if _, err := os.Stat(wasm); err != nil {
		t.Skip("examples not built")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wasmcp.toml")
	conf := "[limits]\ntimeout = \"3s\"\n\n[[plugins]]\nname = \"hash\"\npath = \"" + wasm + "\"\nmemory = \"8MiB\"\n[plugins.grants]\nkv = true\nconfig = { salt = \"x\" }\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := wasmcp(t, "", "plugins", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"hash  ([[plugins]] line 4)", "abi       wasmcp/1 (reactor), c-hash", "tools     sha256, crc32",
		"grants    kv; config salt", "limits    memory 8MiB, timeout 3s, max_output 4MiB, instances 4", "sha256    ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plugins output lacks %q:\n%s", want, stdout)
		}
	}
	junk := t.TempDir()
	if err := os.WriteFile(filepath.Join(junk, "junk.wasm"), []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, code = wasmcp(t, "", "plugins", "--config", cfg, "--plugins", junk, "--json")
	var ls []struct {
		Name, Source, Error string
		Report              *struct{ SHA256, ABI string }
	}
	if err := json.Unmarshal([]byte(stdout), &ls); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	if code != 1 || len(ls) != 2 || ls[0].Report == nil || len(ls[0].Report.SHA256) != 64 || ls[1].Report != nil || ls[1].Error == "" || ls[1].Source != "plugin_dirs "+junk {
		t.Errorf("plugins with a broken one: exit %d, %+v", code, ls)
	}
}

// TestCallShowsTrapSource: `wasmcp call` of a tool that traps exits 1 and
// prints, on stderr, the guest function and file:line of each frame (the
// plugin is built with its name section and line table); the result on
// stdout, what a client would see, has neither.
func TestCallShowsTrapSource(t *testing.T) {
	stdout, stderr, code := wasmcp(t, "", "call", "--plugins", "testdata/hostile/debugtrap.wasm", "load")
	if code != 1 || !strings.Contains(stdout, "plugin crashed: out of bounds memory access") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, want := range []string{".read_past_end(i32) i32", "debugtrap.c:16:", ".load(i32,i32)", "debugtrap.c:25:"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, leak := range []string{"debugtrap.c", "read_past_end"} {
		if strings.Contains(stdout, leak) {
			t.Errorf("stdout shows %q:\n%s", leak, stdout)
		}
	}
}
