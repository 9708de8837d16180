// Package kvtest is the contract every hostapi.KV implementation passes:
// the kv/* host calls of two plugins, through hostapi.Host, with quotas,
// expiry and pagination, so that a store in Redis behaves exactly as the
// process's own.
package kvtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/internal/abi"
)

// Open returns an empty store with quota q for one subtest.
type Open func(t *testing.T, q hostapi.KVQuota) hostapi.KV

// Caller makes one kv/* host call of plugin through a Host over kv and
// returns the result and errno.
func Caller(t *testing.T, plugin string, kv hostapi.KV) func(method, params string) (string, int32) {
	t.Helper()
	h, err := hostapi.New(hostapi.Options{Plugin: plugin, Grants: hostapi.Grants{KV: true}, KV: kv})
	if err != nil {
		t.Fatal(err)
	}
	b := h.Bind(nil)
	return func(method, params string) (string, int32) {
		res, errno := b.Call(context.Background(), method, []byte(params))
		return string(res), errno
	}
}

// Contract runs the kv contract against stores made by open, its expiry
// checks on the wall clock: for a store that keeps a clock of its own
// (Redis).
func Contract(t *testing.T, open Open) { contract(t, open, false) }

// ContractFakeClock is Contract with the expiry checks on a fake clock
// (testing/synctest): a key set with ttl_s 0.2 is there a nanosecond
// before 200 ms and gone at 200 ms, and the checks take no time. For a
// store whose expiry reads the process's clock (time.Now), which a
// synctest bubble fakes.
func ContractFakeClock(t *testing.T, open Open) { contract(t, open, true) }

func contract(t *testing.T, open Open, fake bool) {
	t.Run("calls", func(t *testing.T) { calls(t, open) })
	t.Run("ttl", func(t *testing.T) {
		if fake {
			synctest.Test(t, func(t *testing.T) { ttl(t, open, true) })
			return
		}
		ttl(t, open, false)
	})
	t.Run("pages", func(t *testing.T) { pages(t, open) })
}

// calls checks namespaces, quotas and malformed params.
func calls(t *testing.T, open Open) {
	kv := open(t, hostapi.KVQuota{MaxKeySize: 8, MaxValueSize: 20, MaxKeys: 3, MaxBytes: 60})
	a, b := Caller(t, "a", kv), Caller(t, "b", kv)
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
		// Bytes: k 1+12, k2 2+20, y 1+20 make 56 of 60; k with 20 more
		// bytes would make 64.
		{a, "kv/set", `{"key":"k","value":"0123456789"}`, `{}`, 0},
		{a, "kv/set", `{"key":"k2","value":"0123456789abcdefgh"}`, `{}`, 0},
		{a, "kv/set", `{"key":"y","value":"0123456789abcdefgh"}`, `{}`, 0},
		{a, "kv/set", `{"key":"k","value":"0123456789abcdefgh"}`, ``, abi.ErrTooBig},
		{b, "kv/set", `{"key":"k","value":"0123456789abcdefgh"}`, `{}`, 0},
		{a, "kv/set", `{"key":"k"}`, ``, abi.ErrBadParams},
		{a, "kv/set", `{"key":"k","value":1,"ttl_s":-1}`, ``, abi.ErrBadParams},
		{a, "kv/get", `{"key":""}`, ``, abi.ErrBadParams},
		{a, "kv/list", `{"cursor":"!!"}`, ``, abi.ErrBadParams},
		{a, "kv/get", `"k"`, ``, abi.ErrBadParams},
		{a, "kv/list", `{"prefix":"k"}`, `{"keys":["k","k2"]}`, 0},
		{a, "kv/get", `{"key":"k"}`, `{"value":"0123456789"}`, 0},
		{a, "kv/set", `{"key":"z","value":1}`, ``, abi.ErrTooBig},
		{b, "kv/set", `{"key":"ü\"\\\u0000","value":[1,{"a":null}]}`, `{}`, 0},
		{b, "kv/get", `{"key":"ü\"\\\u0000"}`, `{"value":[1,{"a":null}]}`, 0},
		{b, "kv/list", `{}`, `{"keys":["k","ü\"\\\u0000"]}`, 0},
	}
	for i, s := range steps {
		res, errno := s.call(s.method, s.params)
		if res != s.result || errno != s.errno {
			t.Fatalf("step %d %s %s = %s, %d; want %s, %d", i, s.method, s.params, res, errno, s.result, s.errno)
		}
	}
}

// ttl checks that an expired key is gone from get and list and no longer
// counts against the quota, and that setting a key again without a TTL
// makes it permanent. On a fake clock (exact) it checks the expiry to the
// nanosecond; on the wall clock it waits twice the TTL.
func ttl(t *testing.T, open Open, exact bool) {
	const d = 200 * time.Millisecond // ttl_s 0.2
	kv := open(t, hostapi.KVQuota{MaxKeys: 1})
	a := Caller(t, "a", kv)
	if _, errno := a("kv/set", `{"key":"k","value":1,"ttl_s":0.2}`); errno != 0 {
		t.Fatal(errno)
	}
	if res, _ := a("kv/get", `{"key":"k"}`); res != `{"value":1}` {
		t.Fatalf("before expiry: %s", res)
	}
	if exact {
		time.Sleep(d - time.Nanosecond)
		if res, _ := a("kv/get", `{"key":"k"}`); res != `{"value":1}` {
			t.Fatalf("a nanosecond before expiry: %s", res)
		}
		if res, _ := a("kv/list", `{}`); res != `{"keys":["k"]}` {
			t.Fatalf("list a nanosecond before expiry: %s", res)
		}
		if _, errno := a("kv/set", `{"key":"other","value":1}`); errno != abi.ErrTooBig {
			t.Fatalf("set of a second key a nanosecond before expiry: errno %d, want %d (the quota)", errno, abi.ErrTooBig)
		}
		time.Sleep(time.Nanosecond)
	} else {
		time.Sleep(2 * d)
	}
	if res, _ := a("kv/get", `{"key":"k"}`); res != `{"value":null}` {
		t.Errorf("get at expiry: %s", res)
	}
	if res, _ := a("kv/list", `{}`); res != `{"keys":[]}` {
		t.Errorf("list after expiry: %s", res)
	}
	if _, errno := a("kv/set", `{"key":"other","value":1}`); errno != 0 {
		t.Errorf("set after expiry: %d", errno)
	}
	if res, _ := a("kv/get", `{"key":"k"}`); res != `{"value":null}` {
		t.Errorf("get after expiry: %s", res)
	}
	// Setting a key again without a TTL makes it permanent.
	a("kv/delete", `{"key":"other"}`)
	a("kv/set", `{"key":"p","value":1,"ttl_s":0.2}`)
	a("kv/set", `{"key":"p","value":2}`)
	time.Sleep(2 * d)
	if res, _ := a("kv/get", `{"key":"p"}`); res != `{"value":2}` {
		t.Errorf("re-set without ttl: %s", res)
	}
}

// pages checks kv/list pagination over 250 keys with a prefix.
func pages(t *testing.T, open Open) {
	kv := open(t, hostapi.KVQuota{})
	a := Caller(t, "a", kv)
	for i := range 250 {
		if _, errno := a("kv/set", fmt.Sprintf(`{"key":"p/%03d","value":%d}`, i, i)); errno != 0 {
			t.Fatal(errno)
		}
	}
	a("kv/set", `{"key":"q","value":0}`)
	a("kv/set", `{"key":"p","value":0}`)
	var all []string
	cursor := ""
	for n := 0; ; n++ {
		res, errno := a("kv/list", `{"prefix":"p/","cursor":"`+cursor+`"}`)
		if errno != 0 || n > 3 {
			t.Fatalf("list: %s, %d", res, errno)
		}
		var page struct {
			Keys   []string
			Cursor string
		}
		if err := json.Unmarshal([]byte(res), &page); err != nil {
			t.Fatal(err)
		}
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
