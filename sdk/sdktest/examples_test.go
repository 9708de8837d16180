package sdktest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/runtime"
)

// TestExamplesDescribe checks that every example's manifest lists its tools.
func TestExamplesDescribe(t *testing.T) {
	for path, want := range map[string]string{
		cHash:     "sha256 crc32 base64_encode base64_decode hex_encode hex_decode",
		rustDates: "now unix_to_iso iso_to_unix date_add date_diff iso_week",
		asCalc:    "calc calc_store calc_vars",
		watPing:   "ping",
	} {
		p := newPool(t, path, runtime.Limits{})
		status, m := call(t, p, nil, envelope("wasmcp/describe", obj{}, nil))
		var names []string
		for _, tl := range m["tools"].([]any) {
			names = append(names, tl.(obj)["name"].(string))
		}
		if status != 0 || fmt.Sprint(m["abi"]) != "1" || strings.Join(names, " ") != want {
			t.Errorf("%s: status %d, tools %v", path, status, names)
		}
	}
}

func TestCHash(t *testing.T) {
	p := newPool(t, cHash, runtime.Limits{})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 40 {
		data := make([]byte, rng.IntN(300)+i*i)
		for j := range data {
			data[j] = byte(rng.IntN(256))
		}
		b64 := base64.StdEncoding.EncodeToString(data)
		sum := sha256.Sum256(data)
		got, sc := toolText(t, p, nil, "sha256", obj{"base64": b64})
		if got != hex.EncodeToString(sum[:]) || fmt.Sprint(sc["bytes"]) != strconv.Itoa(len(data)) {
			t.Fatalf("sha256 of %d bytes: %s %v", len(data), got, sc)
		}
		crc := crc32.ChecksumIEEE(data)
		got, sc = toolText(t, p, nil, "crc32", obj{"base64": b64})
		if got != fmt.Sprintf("%08x", crc) || fmt.Sprint(sc["value"]) != strconv.FormatUint(uint64(crc), 10) {
			t.Fatalf("crc32 of %d bytes: %s %v", len(data), got, sc)
		}
		got, sc = toolText(t, p, nil, "base64_decode", obj{"data": b64})
		if sc["hex"] != nil && sc["hex"] != hex.EncodeToString(data) {
			t.Fatalf("base64_decode of %d bytes: %s %v", len(data), got, sc)
		}
	}
	for _, s := range []string{"", "abc", "héllo wörld", "The quick brown fox jumps over the lazy dog", strings.Repeat("ab", 1000)} {
		sum := sha256.Sum256([]byte(s))
		if got, _ := toolText(t, p, nil, "sha256", obj{"text": s}); got != hex.EncodeToString(sum[:]) {
			t.Errorf("sha256(%q) = %s", s, got)
		}
		if got, _ := toolText(t, p, nil, "base64_encode", obj{"text": s}); got != base64.StdEncoding.EncodeToString([]byte(s)) {
			t.Errorf("base64_encode(%q) = %s", s, got)
		}
		if got, _ := toolText(t, p, nil, "base64_encode", obj{"text": s, "url_safe": true}); got != base64.RawURLEncoding.EncodeToString([]byte(s)) {
			t.Errorf("base64_encode url_safe(%q) = %s", s, got)
		}
		if got, _ := toolText(t, p, nil, "hex_encode", obj{"text": s}); got != hex.EncodeToString([]byte(s)) {
			t.Errorf("hex_encode(%q) = %s", s, got)
		}
		if s == "" {
			continue
		}
		if got, sc := toolText(t, p, nil, "hex_decode", obj{"hex": hex.EncodeToString([]byte(s))}); got != s || sc["text"] != s {
			t.Errorf("hex_decode(%q) = %s", s, got)
		}
		if got, _ := toolText(t, p, nil, "base64_decode", obj{"data": base64.URLEncoding.EncodeToString([]byte(s))}); got != s {
			t.Errorf("base64_decode(%q) = %s", s, got)
		}
	}
	if got, _ := toolText(t, p, nil, "crc32", obj{"text": "123456789"}); got != "cbf43926" {
		t.Errorf("crc32 check value = %s", got)
	}
	if got, _ := toolText(t, p, nil, "hex_decode", obj{"hex": "0x68:65-6C 6c 6F"}); got != "hello" {
		t.Errorf("hex_decode with separators = %q", got)
	}
	if got, sc := toolText(t, p, nil, "hex_decode", obj{"hex": "fffe"}); sc["hex"] != "fffe" || !strings.Contains(got, "not UTF-8") {
		t.Errorf("hex_decode binary = %q %v", got, sc)
	}
	for tool, args := range map[string]obj{
		"sha256":        {},
		"crc32":         {"text": "a", "base64": "YQ=="},
		"base64_decode": {"data": "!!!"},
		"hex_decode":    {"hex": "abc"},
		"hex_encode":    {"text": 5},
	} {
		toolError(t, p, nil, tool, args)
	}
	status, r := call(t, p, nil, envelope("resources/read", obj{"uri": "hash://sha256/a%20b"}, nil))
	sum := sha256.Sum256([]byte("a b"))
	if c := r["contents"].([]any)[0].(obj); status != 0 || c["text"] != hex.EncodeToString(sum[:]) {
		t.Errorf("hash://sha256/a%%20b: %d %v", status, r)
	}
}

func TestRustDates(t *testing.T) {
	p := newPool(t, rustDates, runtime.Limits{})
	denied := newHost(map[string]answer{"config/get": {errno: -1}})
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		sec := rng.Int64N(2*253402300799) - 62135596800 // years 0001..9999
		if sec > 253402300799 {
			sec -= 253402300799
		}
		want := time.Unix(sec, 0).UTC()
		got, sc := toolText(t, p, denied, "unix_to_iso", obj{"timestamp": sec})
		if got != want.Format("2006-01-02T15:04:05Z") {
			t.Fatalf("unix_to_iso(%d) = %s, want %s", sec, got, want.Format(time.RFC3339))
		}
		y, w := want.ISOWeek()
		wd := int(want.Weekday()+6)%7 + 1
		if sc["iso_week"] != fmt.Sprintf("%04d-W%02d-%d", y, w, wd) || sc["weekday"] != want.Weekday().String() ||
			fmt.Sprint(sc["day_of_year"]) != strconv.Itoa(want.YearDay()) {
			t.Fatalf("unix_to_iso(%d): %v, want week %d-%d day %d", sec, sc, y, w, want.YearDay())
		}
		got, _ = toolText(t, p, denied, "iso_to_unix", obj{"date": want.Format("2006-01-02T15:04:05-07:00")})
		if got != strconv.FormatInt(sec, 10) {
			t.Fatalf("iso_to_unix(%s) = %s", want, got)
		}
		// date_add matches Go's AddDate except at month ends, where Go
		// normalises (Jan 31 + 1 month = Mar 2/3) and the tool clamps.
		days := rng.IntN(2000) - 1000
		got, _ = toolText(t, p, denied, "date_add", obj{"date": sec, "days": days, "hours": 5})
		if w := want.AddDate(0, 0, days).Add(5 * time.Hour).Format("2006-01-02T15:04:05Z"); got != w {
			t.Fatalf("date_add(%s, %d days 5h) = %s, want %s", want, days, got, w)
		}
	}
	cases := []struct {
		tool, want string
		args       obj
	}{
		{"unix_to_iso", "2023-11-14T22:13:20Z", obj{"timestamp": 1700000000}},
		{"unix_to_iso", "2023-11-14T22:13:20.123Z", obj{"timestamp": 1700000000123, "unit": "ms"}},
		{"unix_to_iso", "2023-11-15T03:43:20+05:30", obj{"timestamp": 1700000000, "offset": "+05:30"}},
		{"iso_to_unix", "1709209815", obj{"date": "2024-02-29T12:30:15.5Z"}},
		{"iso_to_unix", "1709164800", obj{"date": "2024-02-29"}},
		{"iso_to_unix", "1709146800", obj{"date": "2024-02-29T00:00+05:00"}},
		{"date_add", "2024-02-29T00:00:00Z", obj{"date": "2024-01-31", "months": 1}},
		{"date_add", "2023-02-28T00:00:00Z", obj{"date": "2024-02-29", "years": -1}},
		{"date_add", "2025-01-01T00:00:00Z", obj{"date": "2024-12-31T23:59:59Z", "seconds": 1}},
		{"date_diff", "24 years, 2 months, 14 days, 06:30:00 (763799400 seconds)", obj{"from": "2000-01-01T00:00:00Z", "to": "2024-03-15T06:30:00Z"}},
		{"date_diff", "-0 years, 1 months, 0 days, 00:00:00 (-2592000 seconds)", obj{"from": "2024-05-01", "to": "2024-04-01"}},
		{"iso_week", "2020-W53-7", obj{"date": "2021-01-03"}},
		{"iso_week", "2026-W01-1", obj{"date": "2025-12-29"}},
	}
	for _, c := range cases {
		if got, _ := toolText(t, p, denied, c.tool, c.args); got != c.want {
			t.Errorf("%s(%v) = %q, want %q", c.tool, c.args, got, c.want)
		}
	}
	for _, args := range []obj{{"date": "2023-02-29"}, {"date": "2024-13-01"}, {"date": "yesterday"}, {"date": "2024-01-01T25:00"}, {}} {
		toolError(t, p, denied, "iso_to_unix", args)
	}

	// now: the sandbox has real clocks.
	_, sc := toolText(t, p, denied, "now", obj{})
	if d := time.Since(time.UnixMilli(mustInt(t, sc["unix_ms"]))); d < -2*time.Second || d > 5*time.Second {
		t.Errorf("now is off by %v: %v", d, sc)
	}

	// The operator's default_offset applies when granted; a denied config
	// means UTC, any other host error is a tool error.
	granted := newHost(map[string]answer{"config/get": {result: `{"value":"-03:00"}`}})
	if got, _ := toolText(t, p, granted, "unix_to_iso", obj{"timestamp": 0}); got != "1969-12-31T21:00:00-03:00" {
		t.Errorf("with default_offset: %s", got)
	}
	missing := newHost(map[string]answer{"config/get": {errno: -5, result: `{"code":-32602,"message":"not set"}`}})
	if got, _ := toolText(t, p, missing, "unix_to_iso", obj{"timestamp": 0}); got != "1970-01-01T00:00:00Z" {
		t.Errorf("with default_offset unset: %s", got)
	}
	canceled := newHost(map[string]answer{"config/get": {errno: -3}})
	if got := toolError(t, p, canceled, "unix_to_iso", obj{"timestamp": 0}); got != "config/get failed: canceled or past the deadline" {
		t.Errorf("with config/get canceled: %s", got)
	}
}

func mustInt(t *testing.T, v any) int64 {
	t.Helper()
	n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestASCalc(t *testing.T) {
	p := newPool(t, asCalc, runtime.Limits{})
	denied := newHost(map[string]answer{"kv/get": {errno: -1}, "kv/set": {errno: -1}, "kv/list": {errno: -1}})
	for expr, want := range map[string]float64{
		"1+2*3":                        7,
		"(1+2)*3":                      9,
		"2^10 - sqrt(16)":              1020,
		"2^3^2":                        512,
		"-2^2":                         -4,
		"2**-1":                        0.5,
		"10 % 4 + 5!":                  122,
		"0x1F + 1.5e1":                 46,
		"max(1, 7, 3) + min(4, 2)":     9,
		"sum(1,2,3) / avg(2, 4)":       2,
		"hypot(3, 4)":                  5,
		"log(8, 2) + log10(1000)":      6,
		"ln(e^2)":                      2,
		"sin(pi/6)":                    math.Sin(math.Pi / 6),
		"atan2(1, 1) * 4":              math.Pi,
		"gcd(12, 18) * lcm(4, 6)":      72,
		"root(-27, 3)":                 -3,
		"deg(pi)":                      180,
		"0.1 + 0.2":                    0.1 + 0.2,
		"1e308 * 1.5":                  1.5e308,
		"floor(-2.5) + ceil(-2.5)":     -5,
		"round(2.5) + trunc(-2.7)":     1,
		"abs(-3) * sign(-2) + cbrt(8)": -1,
	} {
		_, sc := toolText(t, p, denied, "calc", obj{"expression": expr})
		got, err := strconv.ParseFloat(fmt.Sprint(sc["result"]), 64)
		if err != nil || math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("calc(%q) = %v, want %v", expr, sc["result"], want)
		}
	}
	// Exact JSON numbers: the structured result round-trips bit for bit.
	if _, sc := toolText(t, p, denied, "calc", obj{"expression": "0.1 + 0.2"}); fmt.Sprint(sc["result"]) != "0.30000000000000004" || sc["text"] != "0.3" {
		t.Errorf("0.1 + 0.2: %v", sc)
	}
	if got, _ := toolText(t, p, denied, "calc", obj{"expression": "r * 2", "variables": obj{"r": 1.25}}); got != "2.5" {
		t.Errorf("with variables: %s", got)
	}
	if got, _ := toolText(t, p, denied, "calc", obj{"expression": "pi", "precision": 3}); got != "3.14" {
		t.Errorf("precision 3: %s", got)
	}
	for expr, want := range map[string]string{
		"1/(3-3)":    "division by zero at position 2",
		"5 % 0":      "modulo by zero at position 3",
		"2 * (3 + 4": "missing ')' at position 11",
		"3 +* 4":     "unexpected '*' at position 4",
		"foo(2)":     "unknown function 'foo' at position 1",
		"x + 1":      "unknown variable 'x' at position 1",
		"sqrt(-1)":   "sqrt of a negative number at position 1",
		"10^400":     "the result is not a finite number (Infinity)",
		"":           "empty expression at position 1",
		"2 3":        "unexpected '3' at position 3",
		"max()":      "max needs at least one argument at position 1",
		"(-1)!":      "factorial needs a non-negative integer at position 5",
		"atan2(1)":   "atan2 takes 2 arguments, got 1 at position 1",
	} {
		if got := toolError(t, p, denied, "calc", obj{"expression": expr}); got != want {
			t.Errorf("calc(%q) error = %q, want %q", expr, got, want)
		}
	}

	// Stored variables through the host's kv store.
	if got := toolError(t, p, denied, "calc_store", obj{"name": "x", "expression": "6*7"}); got !=
		"x = 42, but it was not saved: the operator has not granted this plugin the kv store" {
		t.Errorf("calc_store denied: %q", got)
	}
	h := newHost(nil)
	if got, _ := toolText(t, p, h, "calc_store", obj{"name": "x", "expression": "6*7"}); got != "x = 42 (saved)" {
		t.Errorf("calc_store: %q", got)
	}
	if got, _ := toolText(t, p, h, "calc_store", obj{"name": "half", "expression": "1/2"}); got != "half = 0.5 (saved)" {
		t.Errorf("calc_store: %q", got)
	}
	if got, _ := toolText(t, p, h, "calc", obj{"expression": "x + half"}); got != "42.5" {
		t.Errorf("calc with stored x: %q", got)
	}
	if got, _ := toolText(t, p, h, "calc_vars", obj{}); !strings.Contains(got, "x = 42") || !strings.Contains(got, "half = 0.5") {
		t.Errorf("calc_vars: %q", got)
	}
	if got := toolError(t, p, h, "calc_store", obj{"name": "sqrt", "expression": "1"}); !strings.Contains(got, "must be an identifier") {
		t.Errorf("calc_store bad name: %q", got)
	}
	failing := newHost(map[string]answer{"kv/get": {errno: -3}})
	if got := toolError(t, p, failing, "calc", obj{"expression": "y"}); got != "unknown variable 'y' at position 1 (kv/get failed: canceled or past the deadline)" {
		t.Errorf("calc with kv canceled: %q", got)
	}
}

func TestWATPing(t *testing.T) {
	p := newPool(t, watPing, runtime.Limits{})
	if got, _ := toolText(t, p, nil, "ping", obj{}); got != "pong" {
		t.Errorf("ping = %q", got)
	}
	status, r := call(t, p, nil, envelope("prompts/get", obj{"name": "x"}, nil))
	if status != 1 || fmt.Sprint(r["code"]) != "-32601" {
		t.Errorf("prompts/get: %d %v", status, r)
	}
}
