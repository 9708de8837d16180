package hostapi_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/hostapi/kvtest"
)

// TestKVContract runs the kv contract against the in-memory and the
// persistent KVStore, its expiry on a fake clock (they read time.Now).
func TestKVContract(t *testing.T) {
	for _, persistent := range []bool{false, true} {
		name := "memory"
		if persistent {
			name = "dir"
		}
		t.Run(name, func(t *testing.T) {
			kvtest.ContractFakeClock(t, func(t *testing.T, q hostapi.KVQuota) hostapi.KV {
				dir := ""
				if persistent {
					dir = t.TempDir()
				}
				kv, err := hostapi.OpenKV(dir, q)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { kv.Close() })
				return kv
			})
		})
	}
}

// TestKVPersistence checks that a persistent store survives a restart
// with a torn last line ignored and its log compacted.
func TestKVPersistence(t *testing.T) {
	dir := t.TempDir()
	kv, err := hostapi.OpenKV(dir, hostapi.KVQuota{})
	if err != nil {
		t.Fatal(err)
	}
	a := kvtest.Caller(t, "a", kv)
	for _, step := range []string{`{"key":"k","value":{"n":1}}`, `{"key":"k2","value":"v"}`, `{"key":"x","value":"v"}`, `{"key":"y","value":"v"}`} {
		if _, errno := a("kv/set", step); errno != 0 {
			t.Fatal(errno)
		}
	}
	if _, errno := a("kv/delete", `{"key":"x"}`); errno != 0 {
		t.Fatal(errno)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%x.kv", "a"))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"k":"torn","v":`)
	f.Close()
	kv2, err := hostapi.OpenKV(dir, hostapi.KVQuota{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv2.Close()
	a2 := kvtest.Caller(t, "a", kv2)
	if res, _ := a2("kv/list", `{}`); res != `{"keys":["k","k2","y"]}` {
		t.Errorf("after reopen: %s", res)
	}
	if res, _ := a2("kv/get", `{"key":"k"}`); res != `{"value":{"n":1}}` {
		t.Errorf("after reopen: %s", res)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "torn") || strings.Count(string(data), "\n") != 3 {
		t.Errorf("log not compacted: %q", data)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v", st.Mode().Perm())
	}
}
