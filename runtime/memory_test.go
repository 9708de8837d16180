package runtime

import (
	"bytes"
	"context"
	goruntime "runtime"
	"strconv"
	"testing"
)

// TestMemoryStaysBounded: 10,000 calls with 1 MiB requests to a Go plugin
// leave its linear memory and the host heap bounded (the guest yields in
// its export so its GC keeps up; the host reuses per-instance buffers).
func TestMemoryStaysBounded(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	p := newPool(t, goPlugin, Limits{Instances: 1, Memory: 64 << 20}, Sandbox{})
	in := bytes.Repeat([]byte("R"), 1<<20)
	want := strconv.Itoa(len(in))
	var ms goruntime.MemStats
	var base uint64
	for i := range n {
		_, out, err := p.Call(context.Background(), in, nil, nil)
		if err != nil || string(out) != want {
			t.Fatalf("call %d: %q, %v", i, out, err)
		}
		if i == 100 {
			goruntime.GC()
			goruntime.ReadMemStats(&ms)
			base = ms.HeapAlloc
		}
	}
	s := p.Stats()
	if s.Created != 1 || s.Recycled != 0 || s.Discarded != 0 {
		t.Errorf("stats %+v: instance was replaced", s)
	}
	p.mu.Lock()
	linear := p.idle[0].mod.Memory().Size()
	p.mu.Unlock()
	goruntime.GC()
	goruntime.ReadMemStats(&ms)
	t.Logf("%d calls: linear memory %d MiB, heap %d MiB (after 100 calls %d MiB)", n, linear>>20, ms.HeapAlloc>>20, base>>20)
	if linear > 32<<20 {
		t.Errorf("linear memory grew to %d MiB", linear>>20)
	}
	if ms.HeapAlloc > base+64<<20 {
		t.Errorf("heap grew from %d to %d MiB", base>>20, ms.HeapAlloc>>20)
	}
}

// TestDeclaredMaximum: the allocator refuses growth past the module's
// declared maximum (which instrumentation removed) without counting it as
// running out of the plugin's memory limit.
func TestDeclaredMaximum(t *testing.T) {
	m := &limitedMemory{limit: 1 << 30, declMax: 3 << 16}
	if m.Reallocate(1<<16) == nil || m.Reallocate(3<<16) == nil {
		t.Fatal("growth within the declared maximum refused")
	}
	if m.Reallocate(4<<16) != nil {
		t.Fatal("growth past the declared maximum allowed")
	}
	if m.refused {
		t.Error("a refusal at the declared maximum counted as out of memory")
	}
}
