package mcp

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTargetStrikes checks how long a target that was taken over stays off
// the inline path: slowFor, doubling on strikes that follow soon, slowFor
// again after a long quiet time, and never more than slowForMax.
func TestTargetStrikes(t *testing.T) {
	var tg target
	t0 := time.Unix(1000, 0)
	steps := []struct {
		at   time.Duration // when the target is taken over
		want time.Duration // how long it then stays off
	}{
		{0, slowFor},
		{slowFor, 2 * slowFor},     // at once again: doubled
		{3 * slowFor, 4 * slowFor}, // and again
		{7 * slowFor, 8 * slowFor}, // and again
		{time.Hour, slowFor},       // long after: a first strike
		{time.Hour + slowFor, 2 * slowFor},
	}
	for i, s := range steps {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			at := t0.Add(s.at)
			tg.strike(at)
			if tg.inlineAt(at.Add(s.want - time.Nanosecond).UnixNano) {
				t.Errorf("inline %v after strike %d, want off for %v", s.want-time.Nanosecond, i, s.want)
			}
			if !tg.inlineAt(at.Add(s.want).UnixNano) {
				t.Errorf("still off %v after strike %d", s.want, i)
			}
		})
	}
	at := t0.Add(2 * time.Hour)
	for range 20 {
		tg.strike(at)
	}
	if !tg.inlineAt(at.Add(slowForMax).UnixNano) {
		t.Errorf("off for more than slowForMax (%v)", slowForMax)
	}
}

// TestTargetAverage checks that a target goes to workers once its runs
// average more than inlineMax, and comes back once they are quick again.
func TestTargetAverage(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		name   string
		runs   []time.Duration
		inline bool
	}{
		{"new", nil, true},
		{"quick", []time.Duration{5 * time.Microsecond, 8 * time.Microsecond, 3 * time.Microsecond}, true},
		{"one long run", []time.Duration{time.Millisecond}, false},
		{"medium", repeat(100*time.Microsecond, 50), false},
		{"just under", repeat(inlineMax, 50), true},
		{"cold start, then quick", append([]time.Duration{20 * time.Millisecond}, repeat(5*time.Microsecond, 60)...), true},
		{"cold start, a few quick", append([]time.Duration{20 * time.Millisecond}, repeat(5*time.Microsecond, 10)...), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tg target
			for _, d := range tc.runs {
				tg.ran(d)
			}
			if got := tg.inlineAt(now.UnixNano); got != tc.inline {
				t.Errorf("inline = %v after %d runs (average %v), want %v", got, len(tc.runs), time.Duration(tg.avg.Load()), tc.inline)
			}
		})
	}
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// TestTargetsBounded checks that a client naming ever new targets, or
// long ones, cannot grow a connection's memory of them without bound.
func TestTargetsBounded(t *testing.T) {
	st := &stdioConn{}
	long := strings.Repeat("x", 4*maxTargetKey)
	for i := range 3 * maxTargets {
		st.targetOf(&Request{Method: "tools/call", Params: []byte(fmt.Sprintf(`{"name":"%d"}`, i))})
		st.targetOf(&Request{Method: long + fmt.Sprint(i), Params: emptyObject})
		st.targetOf(&Request{Method: "tools/call", Params: []byte(fmt.Sprintf(`{"name":"%s%d"}`, long, i))})
	}
	if n := len(st.targets); n > maxTargets {
		t.Errorf("%d targets remembered, want at most %d", n, maxTargets)
	}
	size := 0
	for k := range st.targets {
		size += len(k)
	}
	if size > maxTargets*maxTargetKey {
		t.Errorf("%d bytes of target names remembered, want at most %d", size, maxTargets*maxTargetKey)
	}
}

// TestTargetOf checks which requests share a target: a request's
// target is read from its params as the reader has them, before they
// are parsed (Request.Parsed is still empty then).
func TestTargetOf(t *testing.T) {
	req := func(method, params string) *Request { return &Request{Method: method, Params: []byte(params)} }
	for _, tc := range []struct {
		name string
		a, b *Request
		same bool
	}{
		{"same tool", req("tools/call", `{"name":"echo","arguments":{"a":1}}`), req("tools/call", `{"arguments":{},"name":"echo"}`), true},
		{"two tools", req("tools/call", `{"name":"echo"}`), req("tools/call", `{"name":"slow"}`), false},
		{"two prompts", req("prompts/get", `{"name":"a"}`), req("prompts/get", `{"name":"b"}`), false},
		{"two resources", req("resources/read", `{"uri":"test://a"}`), req("resources/read", `{"uri":"test://b"}`), false},
		{"tool and prompt", req("tools/call", `{"name":"a"}`), req("prompts/get", `{"name":"a"}`), false},
		{"a method", req("tools/list", `{"cursor":"1"}`), req("tools/list", `{}`), true},
		{"two methods", req("tools/list", `{}`), req("prompts/list", `{}`), false},
		{"params not an object", req("tools/call", `[{"name":"a"}]`), req("tools/call", `null`), true},
		{"name not a string", req("tools/call", `{"name":1}`), req("tools/call", `{"name":{"a":"b"}}`), true},
		{"the first name", req("tools/call", `{"name":"a","name":"b"}`), req("tools/call", `{"name":"a"}`), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &stdioConn{}
			if same := st.targetOf(tc.a) == st.targetOf(tc.b); same != tc.same {
				t.Errorf("same target = %v, want %v", same, tc.same)
			}
			if st.targetOf(tc.a) != st.targetOf(tc.a) {
				t.Error("two records of one target")
			}
		})
	}
}
