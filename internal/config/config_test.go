package config

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// testEnv sets the environment variables the golden files refer to.
func testEnv(t *testing.T) {
	t.Setenv("WASMCP_TEST_HOME", "/home/test")
	t.Setenv("WASMCP_TEST_KEY", "s3cret")
	t.Setenv("WASMCP_TEST_TOKEN", "0123456789abcdef-env")
	t.Setenv("WASMCP_TEST_CLUSTER_KEY", "0123456789abcdef0123456789abcdef-env")
	os.Unsetenv("WASMCP_TEST_UNSET")
	os.Unsetenv("WASMCP_TEST_MEM")
}

// render is what a golden file holds for one input: the decoded config
// and the result of Validate, or the Parse error.
func render(data []byte) string {
	var b strings.Builder
	c, err := Parse(data, "/etc/wasmcp")
	if err != nil {
		b.WriteString("parse error:\n" + err.Error() + "\n")
		return b.String()
	}
	out, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return "marshal error: " + err.Error() + "\n"
	}
	b.Write(out)
	b.WriteString("\n")
	if err := c.Validate(); err != nil {
		b.WriteString("validate:\n" + err.Error() + "\n")
	} else {
		b.WriteString("validate: ok\n")
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	testEnv(t)
	files, err := filepath.Glob("testdata/golden/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range files {
		name := strings.TrimSuffix(filepath.Base(in), ".toml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got := render(data)
			golden := strings.TrimSuffix(in, ".toml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s (run go test -update after checking):\n--- got\n%s\n--- want\n%s", in, golden, got, want)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	testParse(t, "ParseSize", ParseSize, []parseCase[Size]{
		{in: "0", want: 0},
		{in: "1024", want: 1024},
		{in: "64MiB", want: 64 << 20},
		{in: "64 mib", want: 64 << 20},
		{in: "512KiB", want: 512 << 10},
		{in: "4MB", wantErr: `"MB" is ambiguous (powers of 1000 or of 1024?); write "4MiB"`},
		{in: "4kb", wantErr: `"kb" is ambiguous (powers of 1000 or of 1024?); write "4KiB"`},
		{in: "1GiB", want: 1 << 30},
		{in: "2TB", wantErr: `write "2TiB"`},
		{in: "7B", want: 7},
		{in: " 3 GB ", wantErr: `write "3GiB"`},
		{in: "32M", wantErr: `write "32MiB"`},
		{in: "2 tib", want: 2 << 40},
		{in: "", wantErr: "empty size"},
		{in: "MiB", wantErr: "want a number"},
		{in: "-1", wantErr: "want a number"},
		{in: "1.5GiB", wantErr: "unknown unit \".5GiB\""},
		{in: "4 MegaBytes", wantErr: "unknown unit"},
		{in: "99999999999999999999", wantErr: "too large"},
		{in: "99999999999TiB", wantErr: "too large"},
	})
}

func TestSizeString(t *testing.T) {
	tests := []struct {
		in   Size
		want string
	}{
		{0, "0B"}, {1, "1B"}, {1500, "1500B"}, {1024, "1KiB"}, {64 << 20, "64MiB"},
		{3 << 30, "3GiB"}, {1 << 40, "1TiB"}, {1536, "1536B"}, {4e6, "4000000B"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("Size(%d).String() = %q, want %q", uint64(tt.in), got, tt.want)
		}
		if back, err := ParseSize(tt.in.String()); err != nil || back != tt.in {
			t.Errorf("ParseSize(%q) = %d, %v; want round trip to %d", tt.in.String(), back, err, uint64(tt.in))
		}
	}
}

func TestParseRate(t *testing.T) {
	testParse(t, "ParseRate", ParseRate, []parseCase[Rate]{
		{in: "10/s", want: Rate{10, time.Second}},
		{in: " 30 / m ", want: Rate{30, time.Minute}},
		{in: "100/hour", want: Rate{100, time.Hour}},
		{in: "0.5/s", want: Rate{0.5, time.Second}},
		{in: "10", wantErr: `write a count per unit, e.g. "10/s"`},
		{in: "10/d", wantErr: "the unit must be s, m or h"},
		{in: "0/s", wantErr: "the count must be a positive number"},
		{in: "-1/s", wantErr: "the count must be a positive number"},
		{in: "NaN/s", wantErr: "the count must be a positive number"},
		{in: "1e10/s", wantErr: "the count must be a positive number up to 1e9"},
		{in: "x/s", wantErr: "the count must be a positive number"},
	})
	if r := (Rate{30, time.Minute}); r.PerSecond() != 0.5 || r.String() != "30/m" {
		t.Errorf("30/m: %v a second, %q", r.PerSecond(), r.String())
	}
}

func TestParseDuration(t *testing.T) {
	parse := func(s string) (time.Duration, error) { d, err := ParseDuration(s); return d.Std(), err }
	testParse(t, "ParseDuration", parse, []parseCase[time.Duration]{
		{in: "5s", want: 5 * time.Second},
		{in: "250ms", want: 250 * time.Millisecond},
		{in: "1m30s", want: 90 * time.Second},
		{in: " 2h ", want: 2 * time.Hour},
		{in: "5", wantErr: `add a unit, e.g. "5s"`},
		{in: "1.5", wantErr: "add a unit"},
		{in: "", wantErr: "empty duration"},
		{in: "soon", wantErr: `invalid duration "soon"`},
	})
}

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "alpha", "EMPTY": "", "B_2": "two"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	parse := func(s string) (string, error) { return expand(s, lookup) }
	testParse(t, "expand", parse, []parseCase[string]{
		{in: "plain", want: "plain"},
		{in: "${A}", want: "alpha"},
		{in: "x-${A}-${B_2}-y", want: "x-alpha-two-y"},
		{in: "${MISSING:-dflt}", want: "dflt"},
		{in: "${EMPTY:-dflt}", want: "dflt"},
		{in: "${A:-dflt}", want: "alpha"},
		{in: "${MISSING:-}", want: ""},
		{in: "${EMPTY}", want: ""},
		{in: "$$", want: "$"},
		{in: "$${A}", want: "${A}"},
		{in: "cost $5", want: "cost $5"},
		{in: "trailing $", want: "trailing $"},
		{in: "${MISSING}", wantErr: "environment variable MISSING is not set"},
		{in: "${A", wantErr: "unterminated ${"},
		{in: "${}", wantErr: "invalid environment reference"},
		{in: "${1A}", wantErr: "invalid environment reference"},
		{in: "${A B}", wantErr: "invalid environment reference"},
	})
}

func TestLocateKeys(t *testing.T) {
	doc := `# comment
[server]
name = "x" # trailing
"quoted.key" = 1
'lit' = 2
a.b . c = 3
ml = """
line
"""
arr = [
  1, # one
  { k = 1, j = { deep = 2 } },
]
[[plugins]]
name = "a"
[ plugins . grants ]
fs = [{ host = "h" }, { guest = "g" }]
lit = '''
x = 1
'''
after = true
`
	want := []string{
		"server@2", "server.name@3", `server."quoted.key"@4`, "server.lit@5", "server.a.b.c@6",
		"server.ml@7", "server.arr@10", "server.arr.k@12", "server.arr.j@12", "server.arr.j.deep@12",
		"plugins@14", "plugins.name@15", "plugins.grants@16", "plugins.grants.fs@17",
		"plugins.grants.fs.host@17", "plugins.grants.fs.guest@17", "plugins.grants.lit@18", "plugins.grants.after@21",
	}
	var got []string
	for _, kl := range locateKeys([]byte(doc)) {
		parts := make([]string, len(kl.key))
		for i, p := range kl.key {
			if strings.Contains(p, ".") {
				p = `"` + p + `"`
			}
			parts[i] = p
		}
		got = append(got, strings.Join(parts, ".")+"@"+itoa(kl.line))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("locateKeys:\n got %q\nwant %q", got, want)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestLimitsFor(t *testing.T) {
	c := Default()
	p := Plugin{Name: "a", Timeout: Duration(time.Second), Instances: 1}
	got := c.LimitsFor(&p)
	want := Limits{Memory: 64 << 20, Timeout: Duration(time.Second), MaxOutput: 4 << 20, Instances: 1}
	if got != want {
		t.Errorf("LimitsFor = %+v, want %+v", got, want)
	}
	if c.Plugin("a") != nil {
		t.Error("Plugin(\"a\") on a config without plugins is not nil")
	}
}

func TestDefaultValidates(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(c *Config)
		wantErr []string // substrings; empty means valid
	}{
		{name: "default", mutate: func(*Config) {}},
		{name: "valid plugin", mutate: func(c *Config) {
			c.Plugins = []Plugin{{Name: "ok_name-1", Path: "a.wasm", SHA256: strings.Repeat("ab", 32), Prefix: "p_",
				Grants: Grants{HTTP: []string{"https://a.example/v1/"}, FS: []Mount{{Host: "/h", Guest: "/", Mode: "rw"}}}}}
		}},
		{name: "telemetry", mutate: func(c *Config) {
			c.Server.LogFormat = "yaml"
			c.Telemetry = Telemetry{Protocol: "http/json", Endpoint: "localhost:4318", ScheduleDelay: -1}
		}, wantErr: []string{`server.log_format: "yaml"`, `telemetry.protocol: "http/json"`, `telemetry.endpoint: "localhost:4318"`, "telemetry.schedule_delay"}},
		{name: "telemetry ok", mutate: func(c *Config) {
			c.Server.LogFormat = "json"
			c.Telemetry = Telemetry{Protocol: "grpc", Endpoint: "https://otel.example:4317", Metrics: ":9464", UsageInMeta: true}
		}},
		{name: "name too long", mutate: func(c *Config) {
			c.Plugins = []Plugin{{Name: strings.Repeat("a", 65), Path: "a.wasm"}}
		}, wantErr: []string{"name: \"" + strings.Repeat("a", 65)}},
		{name: "every problem at once", mutate: func(c *Config) {
			c.Limits.Instances = 0
			c.Limits.Timeout = 0
			c.Plugins = []Plugin{{Name: "a"}, {Name: "a", Path: "x", Grants: Grants{FS: []Mount{{Host: "h", Guest: "/g", Mode: "ro"}, {Host: "h", Guest: "/g", Mode: "ro"}}}}}
		}, wantErr: []string{
			"limits: timeout: must be positive",
			"limits: instances: must be positive",
			`plugins[0] ("a"): path or url: required`,
			`plugins[1] ("a"): name: duplicate of plugins[0]`,
			`plugins[1] ("a"): grants.fs[1].guest: "/g" is already mounted by fs[0]`,
		}},
		{name: "sse paths", mutate: func(c *Config) {
			c.HTTP.SSEPath = "sse"
			c.HTTP.MessagesPath = "/mcp"
		}, wantErr: []string{`http.sse_path: "sse" must start with "/"`, `http.messages_path: "/mcp" is already http.path`}},
		{name: "sse paths collide", mutate: func(c *Config) {
			c.HTTP.SSEPath = "/mcp"
			c.HTTP.MessagesPath = "/m?x"
		}, wantErr: []string{`http.sse_path: "/mcp" is already http.path`, `http.messages_path: "/m?x" must be a path`}},
		{name: "sse off ignores its paths", mutate: func(c *Config) {
			c.HTTP.SSE = false
			c.HTTP.SSEPath = ""
			c.HTTP.MessagesPath = "/mcp"
		}},
		{name: "bearer token too short", mutate: func(c *Config) {
			c.Auth.Mode = AuthBearer
			c.Auth.Tokens = []Secret{"short"}
		}, wantErr: []string{"auth.tokens[0]: must be at least 16 characters"}},
		{name: "bearer named tokens", mutate: func(c *Config) {
			c.Auth.Mode = AuthBearer
			c.Auth.Token = []NamedToken{{Name: "a", Token: "0123456789abcdef", Scopes: []string{"s"}}, {Name: "a", Token: "0123456789abcdef"}}
		}, wantErr: []string{`auth.token[1].name: duplicate "a"`, "auth.token[1].token: the same token is listed twice"}},
		{name: "jwt needs issuer, resource and keys", mutate: func(c *Config) {
			c.Auth.Mode = AuthJWT
		}, wantErr: []string{"auth.issuer: required", "auth.resource: required", "auth.jwks_file: jwt mode needs"}},
		{name: "jwt valid", mutate: func(c *Config) {
			c.Auth = Auth{Mode: AuthJWT, Issuer: "https://as.example", Resource: "https://rs.example/mcp", JWKSURL: "https://as.example/jwks"}
		}},
		{name: "jwks over http", mutate: func(c *Config) {
			c.Auth = Auth{Mode: AuthJWT, Issuer: "https://as.example", Resource: "https://rs.example/mcp", JWKSURL: "http://as.example/jwks"}
		}, wantErr: []string{"keys must be fetched over https"}},
		{name: "tool shaping", mutate: func(c *Config) {
			c.Plugins = []Plugin{{Name: "p", Path: "p.wasm", Tools: []string{"a", "a", "b c"}, Hide: []string{""}, Burst: 3,
				Override: map[string]Override{"x": {}, "y": {Name: "z"}, "w": {Name: "z"}, "v": {Name: "bad name"}}}}
		}, wantErr: []string{`tools: "a" is listed twice`, `tools: "b c" is not a tool name`, `hide: "" is not a tool name`,
			"override.x: give name, description or both", `override.y: name: "z" is also the new name of "w"`,
			`override.v: name: "bad name"`, "burst: needs rate"}},
		{name: "scopes without auth", mutate: func(c *Config) {
			c.Plugins = []Plugin{{Name: "p", Path: "p.wasm", Scopes: []string{"read"}}}
		}, wantErr: []string{`plugins[0] ("p"): scopes: needs [auth]`}},
		{name: "http limits", mutate: func(c *Config) {
			c.HTTP.MaxConns = 0
			c.HTTP.WriteTimeout = 0
			c.Limits.MaxWaiting = -1
			c.Server.ShutdownGrace = 0
		}, wantErr: []string{"server.shutdown_grace", "http.write_timeout", "http.max_conns", "limits.max_waiting"}},
		{name: "flood limits", mutate: func(c *Config) {
			c.Limits.MaxBatch = -1
			c.Limits.MaxBatchResponse = 10
			c.Auth.JWKSWait = Duration(time.Minute)
			c.Limits.MaxSubscriptions = -1
			c.Limits.PluginConcurrent = -1
			c.Limits.PrincipalRate = -2
			c.Limits.MaxURI = 10
			c.HTTP.ReplayBuffer = 2 << 30
		}, wantErr: []string{"limits.max_subscriptions: must not be negative", "limits.plugin_concurrent: must not be negative", "limits.principal_rate: -2 is not", "limits.max_uri: 10B is not between 256B and 16MiB", "http.replay_buffer: 2GiB is not between", "auth.jwks_wait: 1m0s is not between", "limits.max_batch: must not be negative", "limits.max_batch_response: 10B is not between"}},
		{name: "task limits", mutate: func(c *Config) {
			c.Limits.MaxTasks = -1
			c.Limits.MaxTasksPerPrincipal = -1
			c.Limits.TaskTimeout = Duration(time.Millisecond)
			c.Limits.TaskTTL = Duration(200 * time.Hour)
		}, wantErr: []string{"limits.max_tasks: must not be negative", "limits.max_tasks_per_principal: must not be negative", "limits.task_timeout: 1ms is not between 1s and 168h", "limits.task_ttl: 200h0m0s is not between 1s and 168h"}},
		{name: "task limits set", mutate: func(c *Config) {
			c.Limits.MaxTasks = 10
			c.Limits.MaxTasksPerPrincipal = 2
			c.Limits.TaskTimeout = Duration(time.Hour)
			c.Limits.TaskTTL = Duration(2 * time.Hour)
		}},
		{name: "scheduler and queue limits", mutate: func(c *Config) {
			c.Limits.BackgroundCPUs = -2
			c.Limits.CPUSlice = -1
			c.Limits.QueueWait = -1
			c.Plugins = []Plugin{{Name: "p", Path: "p.wasm", QueueWait: -1}}
		}, wantErr: []string{"limits: background_cpus: must be -1", "limits: cpu_slice: must not be negative", "limits: queue_wait: must not be negative", `plugins[0] ("p"): queue_wait: must not be negative`}},
		{name: "scheduler off", mutate: func(c *Config) {
			c.Limits.BackgroundCPUs = -1
			c.Limits.CPUSlice = Duration(time.Millisecond)
			c.Limits.QueueWait = Duration(time.Second)
		}},
		{name: "module limits", mutate: func(c *Config) {
			c.Limits.MaxTableElements = -1
			c.Limits.MaxNesting = 1 << 33
			c.Limits.MaxFunctionSize = 4 << 30
			c.Limits.CompileTimeout = -1
		}, wantErr: []string{"limits.max_table_elements: -1 is not between 0 (the default) and 4294967295",
			"limits.max_nesting: 8589934592 is not between", "limits.max_function_size: 4GiB is not below 4GiB",
			"limits.compile_timeout: must not be negative"}},
		{name: "manifest limits", mutate: func(c *Config) {
			c.Limits.MaxManifestItems = -1
			c.Limits.MaxManifestBytes = 100 << 20
		}, wantErr: []string{"limits.max_manifest_items: must not be negative", "limits.max_manifest_bytes: 100MiB is not between 1KiB and 64MiB"}},
		{name: "url plugins", mutate: func(c *Config) {
			c.Plugins = []Plugin{
				{Name: "a", URL: "oci://ghcr.io/acme/time:1.2", Refresh: Duration(10 * time.Minute), Required: true, Verify: &Verify{Key: "/k/cosign.pub"}},
				{Name: "b", URL: "oci://localhost:5000/time@sha256:" + strings.Repeat("ab", 32), Verify: &Verify{IdentityRegexp: "^https://github.com/acme/", Issuer: "https://token.actions.githubusercontent.com", TrustedRoot: "/r.json"}},
				{Name: "c", URL: "https://example.com/p.wasm", SHA256: strings.Repeat("ab", 32)},
			}
		}},
		{name: "url problems", mutate: func(c *Config) {
			c.Plugins = []Plugin{
				{Name: "a", Path: "a.wasm", URL: "oci://h/r:1"},
				{Name: "b", URL: "oci://h/r"},
				{Name: "c", URL: "http://h/p.wasm"},
				{Name: "d", URL: "https://h/p.wasm", Verify: &Verify{Key: "k"}},
				{Name: "e", Path: "e.wasm", Required: true, Refresh: Duration(time.Minute)},
				{Name: "f", URL: "oci://h/r:1", Verify: &Verify{Key: "k", Issuer: "i"}},
				{Name: "g", URL: "oci://h/r:1", Verify: &Verify{Identity: "x", IdentityRegexp: "("}},
				{Name: "h", URL: "oci://h/r:1", Verify: &Verify{}},
			}
		}, wantErr: []string{
			`plugins[0] ("a"): path and url: give one, not both`,
			`plugins[1] ("b"): url: "oci://h/r": want oci://HOST`,
			`plugins[2] ("c"): url: "http://h/p.wasm": scheme must be oci:// or https://`,
			`plugins[3] ("d"): verify: signatures are looked up in OCI registries`,
			`plugins[4] ("e"): refresh: needs url`,
			`plugins[4] ("e"): required: needs url`,
			`plugins[5] ("f"): verify: key and keyless`,
			`plugins[6] ("g"): verify: give one of identity and identity_regexp`,
			`plugins[6] ("g"): verify.identity_regexp: error parsing regexp`,
			`plugins[6] ("g"): verify.issuer: required`,
			`plugins[6] ("g"): verify.trusted_root: required`,
			`plugins[7] ("h"): verify: key, or identity`,
		}},
		{name: "memory bounds", mutate: func(c *Config) {
			c.Limits.Memory = maxMemory + 1
		}, wantErr: []string{"more than a wasm32 module can address"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.mutate(c)
			err := c.Validate()
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want errors %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v\nwant it to contain %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "\n") + 1; n != len(tt.wantErr) {
				t.Errorf("Validate() reported %d problems, want %d:\n%v", n, len(tt.wantErr), err)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "wasmcp.toml")
	doc := "[server]\nplugin_dirs = [\"plugins\"]\n[[plugins]]\nname = \"a\"\npath = \"sub/a.wasm\"\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got, want := c.Plugins[0].Path, filepath.Join(dir, "sub", "a.wasm"); got != want {
		t.Errorf("plugin path = %q, want %q", got, want)
	}
	if got, want := c.Server.PluginDirs[0], filepath.Join(dir, "plugins"); got != want {
		t.Errorf("plugin dir = %q, want %q", got, want)
	}

	if err := os.WriteFile(path, []byte("[[plugins]]\nname = \"a\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || err.Error() != `plugins[0] ("a"): path or url: required` {
		t.Errorf("Load of an invalid file = %v, want the validation error alone", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.toml")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("Load of a missing file = %v, want a not-exist error", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func TestUnknownKeyLines(t *testing.T) {
	doc := "[server]\nname = \"x\"\n\n[[plugins]]\nname = \"a\"\npath = \"a\"\nbogus = 1\n\n[[plugins]]\nname = \"b\"\npath = \"b\"\nbogus = 2\n"
	_, err := Parse([]byte(doc), "")
	want := "line 7: unknown key \"plugins.bogus\"\nline 12: unknown key \"plugins.bogus\""
	if err == nil || err.Error() != want {
		t.Fatalf("Parse error = %v\nwant %s", err, want)
	}
}

// TestCheckFiles: a [[plugins]] path that is missing or not a file is
// reported with the entry's name and the line of its [[plugins]] header.
func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.wasm"), []byte("\x00asm"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d.wasm"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "[server]\nname = \"x\"\n\n[[plugins]]\nname = \"ok\"\npath = \"ok.wasm\"\n\n[[plugins]]\nname = \"gone\"\npath = \"gone.wasm\"\n\n[[plugins]]\nname = \"dir\"\npath = \"d.wasm\"\n"
	c, err := Parse([]byte(src), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{c.Plugins[0].Line, c.Plugins[1].Line, c.Plugins[2].Line}; got[0] != 4 || got[1] != 8 || got[2] != 12 {
		t.Errorf("plugin lines %v, want [4 8 12]", got)
	}
	err = c.CheckFiles()
	for _, want := range []string{
		`line 8: plugins[1] ("gone"): path ` + filepath.Join(dir, "gone.wasm") + ": no such file or directory",
		`line 12: plugins[2] ("dir"): path ` + filepath.Join(dir, "d.wasm") + ": not a regular file",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckFiles() = %v, want it to contain %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), `"ok"`) {
		t.Errorf("CheckFiles reports the present file: %v", err)
	}
}

// TestTaskLimitKeys: the [limits] task keys decode into their fields.
func TestTaskLimitKeys(t *testing.T) {
	c, err := Parse([]byte("[limits]\ntask_timeout = \"30m\"\ntask_ttl = \"2h\"\nmax_tasks = 50\nmax_tasks_per_principal = 5\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	l := c.Limits
	if time.Duration(l.TaskTimeout) != 30*time.Minute || time.Duration(l.TaskTTL) != 2*time.Hour || l.MaxTasks != 50 || l.MaxTasksPerPrincipal != 5 {
		t.Fatalf("decoded %+v", l)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse([]byte("[limits]\nmax_task = 5\n"), ""); err == nil {
		t.Fatal("a misspelt task key was accepted")
	}
}

// parseCase is a row of a parser's table: in parses to want, or fails
// with an error that contains wantErr.
type parseCase[T comparable] struct {
	in      string
	want    T
	wantErr string
}

// testParse runs parse (named fn in failures) over the cases, a subtest
// each.
func testParse[T comparable](t *testing.T, fn string, parse func(string) (T, error), tests []parseCase[T]) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("%s(%q) error = %v, want it to contain %q", fn, tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("%s(%q) = %v, %v; want %v", fn, tt.in, got, err, tt.want)
			}
		})
	}
}
