package wasip2

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	cm "github.com/wasmcp/wasmcp/internal/component"
)

// fuzzArgs decodes arguments from fuzz bytes: each a tag byte and a
// payload, the kinds of value canon lifts (handles live or not,
// integers up to huge, strings, byte lists, lists of handles, results).
func fuzzArgs(data []byte, live []uint32) []any {
	var args []any
	for len(data) > 0 && len(args) < 6 {
		tag := data[0]
		data = data[1:]
		n := 0
		if len(data) > 0 {
			n = int(data[0])
			data = data[1:]
		}
		switch tag % 8 {
		case 0:
			if len(live) > 0 {
				args = append(args, live[n%len(live)])
			} else {
				args = append(args, uint32(n))
			}
		case 1:
			args = append(args, uint32(n))
		case 2:
			args = append(args, uint64(n)<<(n%64))
		case 3:
			k := min(n, len(data))
			args = append(args, string(data[:k]))
			data = data[k:]
		case 4:
			k := min(n, len(data))
			args = append(args, slices.Clone(data[:k]))
			data = data[k:]
		case 5:
			var l []any
			for i := 0; i < n%5 && len(live) > 0; i++ {
				l = append(l, live[(n+i)%len(live)])
			}
			args = append(args, l)
		case 6:
			args = append(args, cm.ResultValue{Err: n%2 == 1})
		case 7:
			args = append(args, n%2 == 0)
		}
	}
	return args
}

// FuzzFuncs calls host functions with arguments a guest could pass (and
// some it could not): every call returns a value or an error, never
// panics (wrap would report a panic as "host function failed") and never
// blocks past the call's deadline.
func FuzzFuncs(f *testing.F) {
	f.Add(uint16(0), []byte{0, 0, 4, 3, 'a', '\n', 'b'})
	f.Add(uint16(7), []byte{2, 200, 2, 255})
	f.Add(uint16(40), []byte{5, 3})
	f.Fuzz(fuzzBody)
}

func fuzzBody(t *testing.T, which uint16, data []byte) {
	names := slices.Sorted(maps.Keys(Funcs()))
	st := New(Options{Env: map[string]string{"A": "b"}, Limits: Limits{MaxRead: 1 << 12, MaxResources: 64}})
	defer st.Close()
	ctx, cancel := context.WithTimeout(WithState(context.Background(), st), 2*time.Millisecond)
	defer cancel()
	// A few live resources of each kind to aim at.
	var live []uint32
	for _, n := range []string{stdout, "wasi:cli/stdin#get-stdin", "wasi:clocks/monotonic-clock#subscribe-duration"} {
		v, err := Funcs()[n](ctx, []any{uint64(1)})
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, v.(uint32))
	}
	for i := 0; len(data) > 0 && i < 4; i++ {
		name := names[int(which)%len(names)]
		which = which*31 + uint16(data[0])
		args := fuzzArgs(data, live)
		data = data[min(len(data), 8):]
		_, err := Funcs()[name](ctx, args)
		if err != nil && strings.Contains(err.Error(), "host function failed") {
			t.Fatalf("%s%v: %v", name, args, err)
		}
	}
}
