package wasip2

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"

	cm "github.com/wasmcp/wasmcp/internal/component"
	"github.com/wasmcp/wasmcp/internal/component/canon"
	"github.com/wasmcp/wasmcp/runtime/component"
)

// versions are the WASI versions testdata/wasi-all-VERSION.wasm import.
var versions = []string{"0.2.0", "0.2.3", "0.2.12"}

// unversioned drops the version of an instance name.
func unversioned(inst string) string {
	if at := strings.LastIndexByte(inst, '@'); at > 0 {
		return inst[:at]
	}
	return inst
}

// wasiFuncs returns the function types the component at path imports,
// by unversioned "INSTANCE#NAME".
func wasiFuncs(t testing.TB, path string) (*cm.Component, map[string]*cm.Type) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cm.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*cm.Type{}
	for _, imp := range c.Imports {
		if imp.Sort != cm.SortInstance || imp.Type == nil {
			continue
		}
		for _, e := range imp.Type.Exports {
			if e.Sort == cm.SortFunc {
				out[unversioned(imp.Name)+"#"+e.Name] = e.Type
			}
		}
	}
	return c, out
}

// TestFuncsCoverWASI checks that Funcs implements every function of
// WASI 0.2 (wasi:cli/imports, wasi:http's types and outgoing-handler,
// wasi:config/store) as three minor versions name them, and only those:
// components importing all of it (their dummy core modules lower every
// function) compile with Host.
func TestFuncsCoverWASI(t *testing.T) {
	funcs := Funcs()
	for _, v := range versions {
		c, types := wasiFuncs(t, "testdata/wasi-all-"+v+".wasm")
		var missing []string
		for name := range types {
			if funcs[name] == nil {
				missing = append(missing, name)
			}
		}
		slices.Sort(missing)
		if len(missing) > 0 {
			t.Errorf("%s: %d functions not implemented: %s", v, len(missing), strings.Join(missing, " "))
			continue
		}
		ctx := context.Background()
		rt := wazero.NewRuntime(ctx)
		cc, err := component.Compile(ctx, rt, c, Host())
		if err != nil {
			t.Errorf("%s: %v", v, err)
		} else {
			cc.Close(ctx)
		}
		rt.Close(ctx)
	}
	_, types := wasiFuncs(t, "testdata/wasi-all-0.2.12.wasm")
	for name := range funcs {
		if types[name] == nil {
			t.Errorf("Funcs has %s, which WASI 0.2.12 does not", name)
		}
	}
}

var (
	typesOnce sync.Once
	wasiTypes map[string]*cm.Type
)

// checkResult lowers v as the result of WASI function name with canon,
// as the runtime does: a value that does not fit the WIT type fails the
// test (the unit tests call every function through it).
func checkResult(t testing.TB, name string, v any) {
	t.Helper()
	typesOnce.Do(func() { _, wasiTypes = wasiFuncs(t, "testdata/wasi-all-0.2.12.wasm") })
	ft := wasiTypes[name]
	if ft == nil {
		t.Fatalf("%s is not a WASI 0.2.12 function", name)
	}
	if ft.Result == nil {
		if v != nil {
			t.Fatalf("%s returns nothing, got %#v", name, v)
		}
		return
	}
	fn, err := canon.NewFunc(&cm.Type{Kind: cm.Func, Params: []cm.Field{{Name: "r", Type: ft.Result}}})
	if err != nil {
		t.Fatal(err)
	}
	m := &scratch{b: make([]byte, 1<<16)}
	o := &canon.Options{Memory: m, Realloc: m.realloc, Table: &canon.ResourceTable{}}
	if _, err := fn.NewCall(o).LowerArgs(context.Background(), []any{v}); err != nil {
		t.Fatalf("%s: its result %#v does not lower as %s: %v", name, v, ft.Result, err)
	}
}

// scratch is a linear memory with a bump allocator.
type scratch struct {
	b    []byte
	next uint32
}

func (m *scratch) Size() uint32 { return uint32(len(m.b)) }

func (m *scratch) Read(off, n uint32) ([]byte, bool) {
	if uint64(off)+uint64(n) > uint64(len(m.b)) {
		return nil, false
	}
	return m.b[off : off+n], true
}

func (m *scratch) Write(off uint32, b []byte) bool {
	if uint64(off)+uint64(len(b)) > uint64(len(m.b)) {
		return false
	}
	copy(m.b[off:], b)
	return true
}

func (m *scratch) realloc(_ context.Context, _, _, align, n uint32) (uint32, error) {
	p := (m.next + align - 1) / align * align
	if uint64(p)+uint64(n) > uint64(len(m.b)) {
		return 0, fmt.Errorf("scratch memory full")
	}
	m.next = p + n
	return p, nil
}
