package component

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// seedModules returns the core modules of the test components.
func seedModules(t testing.TB) [][]byte {
	var mods [][]byte
	for _, p := range []string{"testdata/linked.wasm", "../../internal/component/testdata/echo.wasm"} {
		mods = append(mods, load(t, p).Modules...)
	}
	return mods
}

func TestRewriteImports(t *testing.T) {
	mods := seedModules(t)
	main := mods[1] // linked.wat's $main
	out, imps, err := rewriteImports(main, func(imp coreImport) (string, string, error) {
		return "m:" + imp.Module, "f:" + imp.Field, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, imp := range imps {
		names = append(names, imp.Module+"/"+imp.Field)
	}
	want := []string{"host/greet", "host/add", "host/make", "host/drop-thing", "host/r-new", "host/r-rep", "host/r-drop", "env/memory"}
	if !slices.Equal(names, want) {
		t.Fatalf("imports %v", names)
	}
	_, again, err := rewriteImports(out, func(imp coreImport) (string, string, error) { return imp.Module, imp.Field, nil })
	if err != nil || len(again) != len(imps) || again[7].Module != "m:env" || again[7].Field != "f:memory" || again[7].Kind != importMemory {
		t.Fatalf("rewritten imports %+v, %v", again, err)
	}
	// A rename error is the rewrite's.
	boom := errors.New("boom")
	if _, _, err := rewriteImports(main, func(coreImport) (string, string, error) { return "", "", boom }); !errors.Is(err, boom) {
		t.Fatalf("rename error: %v", err)
	}
	for _, bad := range [][]byte{nil, []byte("\x00asm\x02\x00\x00\x00"), main[:len(main)-1], append(bytes.Clone(main[:8]), 2, 5, 1, 1, 0x61)} {
		if _, _, err := rewriteImports(bad, func(i coreImport) (string, string, error) { return i.Module, i.Field, nil }); err == nil {
			t.Errorf("accepted % x", bad[:min(len(bad), 12)])
		}
	}
}

// FuzzRewriteImports: any bytes give an error or a module whose imports
// read back as renamed.
func FuzzRewriteImports(f *testing.F) {
	for _, m := range seedModules(f) {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, imps, err := rewriteImports(b, func(imp coreImport) (string, string, error) {
			return "x" + imp.Module, imp.Field + "y", nil
		})
		if err != nil {
			return
		}
		_, again, err := rewriteImports(out, func(imp coreImport) (string, string, error) { return imp.Module, imp.Field, nil })
		if err != nil || len(again) != len(imps) {
			t.Fatalf("rewritten module does not read back: %v", err)
		}
		for i := range imps {
			if again[i].Module != "x"+imps[i].Module || again[i].Field != imps[i].Field+"y" || again[i].Kind != imps[i].Kind {
				t.Fatalf("import %d: %+v became %+v", i, imps[i], again[i])
			}
		}
	})
}
