package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func policyEnv(k string) (string, bool) {
	v, ok := map[string]string{"OPENWEATHER_API_KEY": "k123", "APP_ENV": "prod", "HOME": "/home/u"}[k]
	return v, ok
}

// TestParsePolicy maps policy files in the shapes of Wassette's and
// policy-mcp's examples to grants.
func TestParsePolicy(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       Grants
		mem        Size
		errs       []string // substrings of the error; nil for success
	}{
		{
			name: "wassette weather example",
			yaml: `version: "1.0"
description: "Permission policy for mcp-wasmtime weather demo"
permissions:
  network:
    allow:
      - host: "api.openweathermap.org"
  environment:
    allow:
      - key: "OPENWEATHER_API_KEY"
`,
			want: Grants{
				HTTP:   []string{"https://api.openweathermap.org/", "http://api.openweathermap.org/"},
				Env:    map[string]string{"OPENWEATHER_API_KEY": "k123"},
				Config: map[string]string{"OPENWEATHER_API_KEY": "k123"},
			},
		},
		{
			name: "filesystem example with $schema and comments",
			yaml: `$schema: https://raw.githubusercontent.com/microsoft/policy-mcp/main/schema/policy-v1.0.schema.json
# file system access policy
version: "1.0"
permissions:
  storage:
    allow:
      - uri: "fs:///srv/project"
        access: ["read"]
      - uri: "fs://data/**"
        access: ["read", "write"]
      - uri: "fs:///srv/project"
        access: ["read", "write"]
`,
			want: Grants{FS: []Mount{
				{Host: "/srv/project", Guest: "/srv/project", Mode: "rw"},
				{Host: "/etc/wasmcp/data", Guest: "/etc/wasmcp/data", Mode: "rw"},
			}},
		},
		{
			name: "empty permissions",
			yaml: "version: \"1.0\"\ndescription: \"in-memory\"\npermissions: {}\n",
		},
		{
			name: "null permissions",
			yaml: "version: \"1.0\"\npermissions:\n",
		},
		{
			name: "host as a URL, an unset key, denies that restate the default",
			yaml: `version: "1.1"
permissions:
  network:
    allow:
      - host: "https://example.com/"
      - host: "localhost:8080"
    deny:
      - host: "*.malicious.com"
      - host: "*"
      - cidr: "0.0.0.0/0"
  environment:
    allow:
      - key: "NOT_SET_ANYWHERE"
      - key: "APP_ENV"
  storage:
    allow:
      - uri: "fs:///tmp/work/**"
        access: [read]
    deny:
      - uri: "fs:///etc/**"
        access: [read, write]
  resources:
    limits:
      memory: 512Mi
`,
			want: Grants{
				HTTP:   []string{"https://example.com/", "https://localhost:8080/", "http://localhost:8080/"},
				Env:    map[string]string{"APP_ENV": "prod"},
				Config: map[string]string{"APP_ENV": "prod"},
				FS:     []Mount{{Host: "/tmp/work", Guest: "/tmp/work", Mode: "ro"}},
			},
			mem: 512 << 20,
		},
		{
			name: "legacy memory in MB",
			yaml: "version: \"1.0\"\npermissions:\n  resources:\n    memory: 128\n",
			mem:  128 << 20,
		},
		{
			name: "policy-mcp comprehensive example",
			yaml: `version: "1.0"
permissions:
  storage:
    allow:
    - uri: "fs://workspace/**"
      access: ["read", "write"]
    deny:
    - uri: "fs://workspace/secret/**"
      access: ["read", "write"]
  network:
    allow:
    - host: "api.openai.com"
    - host: "*.internal.company.com"
    - cidr: "10.0.0.0/8"
    deny:
    - host: "api.openai.com"
    - cidr: "10.1.0.0/16"
  runtime:
    docker:
      security:
        privileged: false
  resources:
    cpu: 50.0
    io: 1000
  ipc:
    allow:
    - uri: "pipe://app-service"
`,
			errs: []string{
				`storage.deny[0].uri "fs://workspace/secret/**": overlaps the allowed /etc/wasmcp/workspace`,
				`network.allow[1].host "*.internal.company.com": wildcards are not supported`,
				`network.allow[2].cidr "10.0.0.0/8"`,
				`network.deny[0].host "api.openai.com": denies the allowed host api.openai.com`,
				`network.deny[1].cidr "10.1.0.0/16"`,
				"permissions.runtime",
				"permissions.resources cpu",
				"permissions.resources.io",
				"permissions.ipc",
			},
		},
		{
			name: "storage patterns and access wasmcp cannot honour",
			yaml: `version: "1.0"
permissions:
  storage:
    allow:
    - uri: "fs://var/log/*.log"
      access: ["read"]
    - uri: "fs://sandbox/temp/**"
      access: ["write"]
    - uri: "s3://bucket"
      access: ["read"]
    - uri: "fs://x"
      access: ["execute"]
  network:
    allow:
    - defaults: true
    - host: "ftp://files.example.com"
  environment:
    allow:
    - key: "BAD-NAME"
`,
			errs: []string{
				`storage.allow[0].uri "fs://var/log/*.log": wasmcp mounts whole directories`,
				`storage.allow[1].access: write without read`,
				`storage.allow[2].uri "s3://bucket": only fs://`,
				`storage.allow[3].access: "execute"`,
				"network.allow[0].defaults",
				`network.allow[1].host "ftp://files.example.com"`,
				`environment.allow[0].key "BAD-NAME"`,
			},
		},
		{name: "unknown key", yaml: "version: \"1.0\"\npermissions:\n  storge: {}\n", errs: []string{"storge"}},
		{name: "no version", yaml: "permissions: {}\n", errs: []string{"version"}},
		{name: "version 2", yaml: "version: \"2.0\"\n", errs: []string{"version"}},
		{name: "not yaml", yaml: "version: [\n", errs: []string{"not a policy file"}},
		{name: "bad quantity", yaml: "version: \"1.0\"\npermissions:\n  resources:\n    limits:\n      memory: lots\n", errs: []string{"limits.memory"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, mem, err := ParsePolicy([]byte(c.yaml), "/etc/wasmcp", policyEnv)
			if c.errs != nil {
				if err == nil {
					t.Fatalf("no error; grants %+v", g)
				}
				for _, e := range c.errs {
					if !strings.Contains(err.Error(), e) {
						t.Errorf("error does not mention %q:\n%v", e, err)
					}
				}
				if n := len(strings.Split(err.Error(), "\n")); len(c.errs) > 1 && n != len(c.errs) {
					t.Errorf("%d errors, want %d:\n%v", n, len(c.errs), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*g, c.want) || mem != c.mem {
				t.Errorf("grants %+v memory %v, want %+v %v", *g, mem, c.want, c.mem)
			}
			if errs := checkGrants("grants", g); len(errs) > 0 {
				t.Errorf("the grants do not validate: %v", errs)
			}
		})
	}
}

func TestLoadPolicy(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("policies/weather.yaml", `version: "1.0"
permissions:
  network:
    allow:
      - host: "api.weather.gov"
  storage:
    allow:
      - uri: "fs://cache/**"
        access: [read, write]
  resources:
    memory: 32
`)
	cfg := write("wasmcp.toml", `
[[plugins]]
name = "weather"
path = "weather.wasm"
policy = "policies/weather.yaml"
`)
	c, err := Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Plugins[0]
	want := Grants{
		HTTP: []string{"https://api.weather.gov/", "http://api.weather.gov/"},
		FS:   []Mount{{Host: filepath.Join(dir, "policies/cache"), Guest: filepath.Join(dir, "policies/cache"), Mode: "rw"}},
	}
	if !reflect.DeepEqual(p.Grants, want) || p.Memory != 32<<20 || p.Policy != filepath.Join(dir, "policies/weather.yaml") {
		t.Errorf("plugin %+v", p)
	}

	for _, tc := range []struct{ name, toml, want string }{
		{"policy and grants", `
[[plugins]]
name = "w"
path = "w.wasm"
policy = "policies/weather.yaml"
[plugins.grants]
kv = true
`, `line 2: plugins[0] ("w"): policy ` + filepath.Join(dir, "policies/weather.yaml") + `: policy and [plugins.grants]: give one, not both`},
		{"policy memory and memory", `
[[plugins]]
name = "w"
path = "w.wasm"
memory = "16MiB"
policy = "policies/weather.yaml"
`, "give one, not both"},
		{"missing policy", `
[[plugins]]
name = "w"
path = "w.wasm"
policy = "nope.yaml"
`, "nope.yaml: open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(write(tc.name+".toml", tc.toml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte("version: \"1.0\"\npermissions:\n  network:\n    allow:\n      - host: a.example\n"))
	f.Add([]byte("version: \"1.0\"\npermissions:\n  storage:\n    allow:\n      - uri: fs:///x/**\n        access: [read]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, _, err := ParsePolicy(data, "/base", policyEnv)
		if err != nil {
			return
		}
		if errs := checkGrants("grants", g); len(errs) > 0 {
			t.Fatalf("accepted policy gives invalid grants: %v\n%s", errs, data)
		}
	})
}

// TestPolicyLock: the lock records the grants a policy gives, and a
// policy edited to allow more is refused as widened grants.
func TestPolicyLock(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "p.yaml")
	cfgPath := filepath.Join(dir, "wasmcp.toml")
	writeFile := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(cfgPath, "[[plugins]]\nname = \"w\"\nurl = \"oci://ghcr.io/x/w:1\"\npolicy = \"p.yaml\"\n")
	writeFile(pol, "version: \"1.0\"\npermissions:\n  network:\n    allow:\n      - host: a.example\n")
	c, err := Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	lock := &Lock{Plugins: []LockEntry{{Name: "w", URL: "oci://ghcr.io/x/w:1", Grants: c.Plugins[0].Grants}}}
	if err := lock.Check(&c.Plugins[0]); err != nil {
		t.Fatalf("unchanged policy: %v", err)
	}
	writeFile(pol, "version: \"1.0\"\npermissions:\n  network:\n    allow:\n      - host: a.example\n      - host: b.example\n")
	if c, err = Load(cfgPath); err != nil {
		t.Fatal(err)
	}
	if err := lock.Check(&c.Plugins[0]); !errors.Is(err, ErrGrantsWidened) || !strings.Contains(err.Error(), "https://b.example/") {
		t.Fatalf("widened policy: %v", err)
	}
}
