package hostapi

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/abi"
)

func kvHost(t *testing.T, plugin string, kv *KVStore) func(method, params string) (string, int32) {
	t.Helper()
	h, err := New(Options{Plugin: plugin, Grants: Grants{KV: true}, KV: kv})
	if err != nil {
		t.Fatal(err)
	}
	b := h.Bind(nil)
	return func(method, params string) (string, int32) {
		res, errno := b.Call(context.Background(), method, []byte(params))
		return string(res), errno
	}
}

func TestKV(t *testing.T) {
	for _, dir := range []string{"", "persistent"} {
		t.Run("dir="+dir, func(t *testing.T) {
			if dir != "" {
				dir = t.TempDir()
			}
			kv, err := OpenKV(dir, KVQuota{MaxKeySize: 8, MaxValueSize: 20, MaxKeys: 3, MaxBytes: 60})
			if err != nil {
				t.Fatal(err)
			}
			defer kv.Close()
			a, b := kvHost(t, "a", kv), kvHost(t, "b", kv)
			steps := []struct {
				call           func(string, string) (string, int32)
				method, params string
				result         string
				errno          int32
			}{
				{a, "kv/get", `{"key":"k"}`, `{"value":null}`, 0},
				{a, "kv/set", `{"key":"k","value":{"n":1}}`, `{}`, 0},
				{a, "kv/get", `{"key":"k"}`, `{"value":{"n":1}}`, 0},
				{b, "kv/get", `{"key":"k"}`, `{"value":null}`, 0},
				{a, "kv/set", `{"key":"k2","value":"v"}`, `{}`, 0},
				{a, "kv/set", `{"key":"x","value":"v"}`, `{}`, 0},
				{a, "kv/set", `{"key":"y","value":"v"}`, ``, abi.ErrTooBig},
				{a, "kv/set", `{"key":"k","value":"` + strings.Repeat("v", 30) + `"}`, ``, abi.ErrTooBig},
				{a, "kv/set", `{"key":"` + strings.Repeat("k", 9) + `","value":1}`, ``, abi.ErrTooBig},
				{a, "kv/list", `{"prefix":"k"}`, `{"keys":["k","k2"]}`, 0},
				{a, "kv/delete", `{"key":"x"}`, `{}`, 0},
				{a, "kv/delete", `{"key":"nope"}`, `{}`, 0},
				{a, "kv/set", `{"key":"y","value":"v"}`, `{}`, 0},
				{a, "kv/set", `{"key":"k"}`, ``, abi.ErrBadParams},
				{a, "kv/set", `{"key":"k","value":1,"ttl_s":-1}`, ``, abi.ErrBadParams},
				{a, "kv/get", `{"key":""}`, ``, abi.ErrBadParams},
				{a, "kv/list", `{"cursor":"!!"}`, ``, abi.ErrBadParams},
				{a, "kv/get", `"k"`, ``, abi.ErrBadParams},
			}
			for i, s := range steps {
				res, errno := s.call(s.method, s.params)
				if res != s.result || errno != s.errno {
					t.Fatalf("step %d %s %s = %s, %d; want %s, %d", i, s.method, s.params, res, errno, s.result, s.errno)
				}
			}
			if dir == "" {
				return
			}
			// Persisted across a restart, with a torn last line ignored.
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
			kv2, err := OpenKV(dir, KVQuota{})
			if err != nil {
				t.Fatal(err)
			}
			defer kv2.Close()
			a2 := kvHost(t, "a", kv2)
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
		})
	}
}

func TestKVTTL(t *testing.T) {
	dir := t.TempDir()
	kv, _ := OpenKV(dir, KVQuota{MaxKeys: 1})
	a := kvHost(t, "a", kv)
	if _, errno := a("kv/set", `{"key":"k","value":1,"ttl_s":0.05}`); errno != 0 {
		t.Fatal(errno)
	}
	if res, _ := a("kv/get", `{"key":"k"}`); res != `{"value":1}` {
		t.Fatalf("before expiry: %s", res)
	}
	time.Sleep(100 * time.Millisecond)
	if res, _ := a("kv/list", `{}`); res != `{"keys":[]}` {
		t.Errorf("list after expiry: %s", res)
	}
	// The expired key no longer counts against MaxKeys.
	if _, errno := a("kv/set", `{"key":"other","value":1}`); errno != 0 {
		t.Errorf("set after expiry: %d", errno)
	}
	if res, _ := a("kv/get", `{"key":"k"}`); res != `{"value":null}` {
		t.Errorf("get after expiry: %s", res)
	}
	kv.Close()
}

func TestKVListPages(t *testing.T) {
	kv, _ := OpenKV("", KVQuota{})
	defer kv.Close()
	a := kvHost(t, "a", kv)
	for i := range 250 {
		if _, errno := a("kv/set", fmt.Sprintf(`{"key":"p/%03d","value":%d}`, i, i)); errno != 0 {
			t.Fatal(errno)
		}
	}
	a("kv/set", `{"key":"q","value":0}`)
	var all []string
	cursor := ""
	for pages := 0; ; pages++ {
		res, errno := a("kv/list", `{"prefix":"p/","cursor":"`+cursor+`"}`)
		if errno != 0 || pages > 3 {
			t.Fatalf("list: %s, %d", res, errno)
		}
		var page struct {
			Keys   []string
			Cursor string
		}
		json.Unmarshal([]byte(res), &page)
		all = append(all, page.Keys...)
		if page.Cursor == "" {
			break
		}
		cursor = page.Cursor
	}
	if len(all) != 250 || all[0] != "p/000" || all[249] != "p/249" {
		t.Errorf("listed %d keys", len(all))
	}
}
