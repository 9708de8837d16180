package component

import (
	"errors"
	"os"
	"testing"
)

func TestDecodeEcho(t *testing.T) {
	b, err := os.ReadFile("testdata/echo.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if !IsComponent(b) {
		t.Fatal("IsComponent false")
	}
	c, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Modules) != 1 || len(c.CoreInstances) != 1 || len(c.Imports) != 1 {
		t.Fatalf("modules %d core instances %d imports %d", len(c.Modules), len(c.CoreInstances), len(c.Imports))
	}
	if c.Imports[0].Name != "test:rt/host@0.2.3" || c.Imports[0].Sort != SortInstance {
		t.Fatalf("import %+v", c.Imports[0].Extern)
	}
	if ft := c.Imports[0].Type.Func("open"); ft == nil || ft.Result.Kind != Own || ft.Result.Res.Name != "handle" {
		t.Fatalf("open: %v", ft)
	}
	var echo *Export
	for i, e := range c.Exports {
		if e.Name == "echo" {
			echo = &c.Exports[i]
		}
	}
	if echo == nil || echo.Type.String() != "func(s: string) -> string" {
		t.Fatalf("echo export: %+v", echo)
	}
	f := c.Funcs[echo.Index]
	if f.Kind != FuncLift || f.Opts.Memory != 0 || f.Opts.Realloc < 0 || f.Opts.Encoding != UTF8 {
		t.Fatalf("echo def %+v", f)
	}
	for _, name := range []string{"point", "e", "f", "v"} {
		found := false
		for _, e := range c.Exports {
			found = found || (e.Name == name && e.Sort == SortType)
		}
		if !found {
			t.Errorf("type export %q missing", name)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	b, err := os.ReadFile("testdata/echo.wasm")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		in          []byte
		unsupported bool
	}{
		{"empty", nil, false},
		{"core module", []byte{0, 'a', 's', 'm', 1, 0, 0, 0}, false},
		{"old version", []byte{0, 'a', 's', 'm', 0x0a, 0, 1, 0}, false},
		{"truncated", b[:len(b)-3], false},
		{"unknown section", append(append([]byte{}, preamble...), 0x55, 0x00), false},
		{"start", append(append([]byte{}, preamble...), 0x09, 0x01, 0x00), true},
		{"stream type", append(append([]byte{}, preamble...), 0x07, 0x03, 0x01, 0x66, 0x00), true},
		{"huge vector", append(append([]byte{}, preamble...), 0x07, 0x05, 0xff, 0xff, 0xff, 0xff, 0x0f), false},
		{"bad type index", append(append([]byte{}, preamble...), 0x07, 0x03, 0x01, 0x70, 0x05), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.in)
			if err == nil {
				t.Fatal("decoded")
			}
			if got := errors.Is(err, ErrUnsupported); got != tc.unsupported {
				t.Fatalf("errors.Is(ErrUnsupported) = %v: %v", got, err)
			}
		})
	}
}

func TestDecodeDeepTypeRefused(t *testing.T) {
	// 100 nested lists, each referring to the previous type.
	body := []byte{100, 0x70, 0x7f}
	for i := 1; i < 100; i++ {
		body = append(body, 0x70, byte(i-1))
		if i-1 >= 64 {
			body = append(body[:len(body)-1], byte(0x80|((i-1)&0x7f)), byte((i-1)>>7))
		}
	}
	in := append(append([]byte{}, preamble...), 0x07, byte(len(body)))
	in = append(in, body...)
	if _, err := Decode(in); err == nil {
		t.Fatal("a 100-deep type decoded")
	}
}

func FuzzDecode(f *testing.F) {
	if b, err := os.ReadFile("testdata/echo.wasm"); err == nil {
		f.Add(b)
	}
	f.Add(append([]byte{}, preamble...))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err == nil {
			for _, e := range c.Exports {
				_ = e.Type.String()
			}
		}
	})
}
