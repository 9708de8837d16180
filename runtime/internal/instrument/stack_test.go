package instrument

import (
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"
)

// TestStackBudget: only calls that can recur are charged; a deep but
// bounded recursion gives its whole charge back; an unbounded one traps
// with the budget negative, far shallower than wazero's own ceiling
// (about 3.5 million frames this small, a 50 MB stack).
func TestStackBudget(t *testing.T) {
	out, info, err := Instrument(read(t, "stack.wasm"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// Charged (the back edges of the search): self -> self, one of even
	// -> odd and odd -> even, and the call_indirect of helper; not the
	// calls of note, mid or leaf.
	if info.Calls != 12 || info.StackCalls != 3 {
		t.Errorf("calls %d, charged %d; want 12, 3", info.Calls, info.StackCalls)
	}
	mod := instantiate(t, newRuntime(t), out)
	stack, ok := mod.ExportedGlobal(StackName).(api.MutableGlobal)
	if !ok || api.DecodeI32(stack.Get()) != Stack {
		t.Fatalf("stack budget %v", mod.ExportedGlobal(StackName))
	}
	last := mod.ExportedGlobal("last").(api.MutableGlobal)
	const maxDepth = 1 << 20 // frames of 56 estimated bytes or more: under 200,000
	tests := []struct {
		fn       string
		n        uint64
		overflow bool
	}{
		{"self", 10_000, false},
		{"even", 10_000, false},
		{"viatable", 10_000, false},
		{"chain", 1_000_000, false},
		{"self", 100_000_000, true},
		{"even", 100_000_000, true},
		{"viatable", 100_000_000, true},
	}
	for _, tt := range tests {
		stack.Set(api.EncodeI32(Stack))
		got := run(mod, call{fn: tt.fn, args: []uint64{tt.n}})
		budget, deepest := api.DecodeI32(stack.Get()), tt.n-uint64(api.DecodeI32(last.Get()))
		t.Logf("%s(%d): %v, budget left %d, %d frames deep", tt.fn, tt.n, got, budget, deepest)
		switch {
		case !tt.overflow && (got.err != "" || len(got.results) != 1 || got.results[0] != tt.n):
			t.Errorf("%s(%d) = %+v, want %d", tt.fn, tt.n, got, tt.n)
		case !tt.overflow && budget != Stack:
			t.Errorf("%s(%d): budget %d after the call, want it all back (%d)", tt.fn, tt.n, budget, Stack)
		case tt.overflow && !strings.Contains(got.err, "unreachable"):
			t.Errorf("%s(%d) = %+v, want the budget's trap", tt.fn, tt.n, got)
		case tt.overflow && (budget >= 0 || deepest < 10_000 || deepest > maxDepth):
			t.Errorf("%s(%d): budget %d, %d frames deep: want a negative budget within %d frames", tt.fn, tt.n, budget, deepest, maxDepth)
		}
	}
}
