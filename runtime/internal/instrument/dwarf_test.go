package instrument

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// codeAndLines returns wasm's code section payload and its line table
// (read as rebuildLines reads it, without moving anything).
func codeAndLines(t *testing.T, wasm []byte) ([]byte, []lineRow) {
	t.Helper()
	m, err := scan(wasm, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var code []byte
	for _, s := range m.secs {
		if s.id == secCode {
			code = wasm[s.start:s.end]
		}
	}
	d := m.debugSections()
	if d == nil {
		t.Fatal("no usable DWARF")
	}
	rows, ok := readLines(d, []anchor{{0, 0}}, len(code))
	if !ok || len(rows) == 0 {
		t.Fatalf("line table not read (%d rows)", len(rows))
	}
	return code, rows
}

// TestLinesFollowTheCode: instrumenting a module built with a line table
// (testdata/hostile/debugtrap.wasm, C at -O0 with wasi-libc's own DWARF)
// keeps every row, in order, with its file, line and column, at an
// address where the instrumented code holds the same opcode as the
// original at the original address (a function's start row at that
// function's start); and the module still compiles.
func TestLinesFollowTheCode(t *testing.T) {
	in, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata/hostile/debugtrap.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	out, info, err := Instrument(in, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !info.Lines {
		t.Fatalf("no line table carried over: %+v", info)
	}
	inCode, inRows := codeAndLines(t, in)
	outCode, outRows := codeAndLines(t, out)
	if len(inRows) != len(outRows) {
		t.Fatalf("%d rows, %d after instrumentation", len(inRows), len(outRows))
	}
	inBodies, outBodies := bodyStarts(t, inCode), bodyStarts(t, outCode)
	for k, a := range inRows {
		b := outRows[k]
		if a.file != b.file || a.line != b.line || a.col != b.col {
			t.Fatalf("row %d: %s:%d:%d became %s:%d:%d", k, a.file, a.line, a.col, b.file, b.line, b.col)
		}
		if f, ok := inBodies[a.addr]; ok { // a function's start: its locals may have changed
			if outBodies[b.addr] != f {
				t.Fatalf("row %d: function %d's start %#x became %#x, not that function's start", k, f, a.addr, b.addr)
			}
			continue
		}
		// The instruction's opcode (checks go between instructions, so
		// what follows it may differ).
		n := 1
		if !bytes.Equal(inCode[a.addr:a.addr+n], outCode[b.addr:b.addr+n]) {
			t.Fatalf("row %d (%s:%d): code %x at %#x, %x at %#x after instrumentation", k, a.file, a.line,
				inCode[a.addr:a.addr+n], a.addr, outCode[b.addr:b.addr+n], b.addr)
		}
	}
	if _, err := newRuntime(t).CompileModule(t.Context(), out); err != nil {
		t.Fatal(err)
	}
	// Bound does not move code: the DWARF stays as it was.
	bounded, err := Bound(in, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, rows := codeAndLines(t, bounded); len(rows) != len(inRows) {
		t.Errorf("Bound: %d rows, want %d", len(rows), len(inRows))
	}
}

// bodyStarts maps the offset of each function body (after its size) in a
// code section payload to the function's index among the bodies.
func bodyStarts(t *testing.T, code []byte) map[int]int {
	t.Helper()
	starts := map[int]int{}
	n, i, err := u32(code, 0)
	for k := 0; err == nil && k < int(n); k++ {
		var size uint32
		size, i, err = u32(code, i)
		starts[i] = k
		i += int(size)
	}
	if err != nil {
		t.Fatal(err)
	}
	return starts
}

// TestLinesSmall: a hand-made line table (appendDWARF's) on a one-loop
// function is carried over with its rows after the entry check; DWARF
// debug/dwarf cannot read, or too much of it, is dropped.
func TestLinesSmall(t *testing.T) {
	code := withBody(0, 0x03, 0x40, 0x0b, 0x0b) // code payload: 1, 5, 0, loop @3, end, end
	rows := []lineRow{{addr: 3, file: "a.c", line: 3, col: 1}, {addr: 5, file: "b.c", line: 1}}
	for _, tc := range []struct {
		name  string
		debug []byte
		lines bool
	}{
		{"readable", appendDWARF(nil, rows, 7), true},
		{"garbage", binModule(custom(".debug_info", 1, 2, 3), custom(".debug_line", 4))[8:], false},
		{"too large", append(appendDWARF(nil, rows, 7), binModule(custom(".debug_loc", make([]byte, MaxDebugSections)...))[8:]...), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, info, err := Instrument(append(append([]byte(nil), code...), tc.debug...), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if info.Lines != tc.lines || bytes.Contains(out, []byte(".debug_loc")) || bytes.Contains(out, []byte(".debug_info")) != tc.lines {
				t.Fatalf("info %+v, lines in the output %v", info, bytes.Contains(out, []byte(".debug_info")))
			}
			if !tc.lines {
				return
			}
			outCode, got := codeAndLines(t, out)
			if len(got) != 2 || got[0].file != "a.c" || got[1].line != 1 || outCode[got[0].addr] != 0x03 || outCode[got[1].addr] != 0x0b || got[0].addr <= 3 {
				t.Errorf("rows %+v", got)
			}
		})
	}
}
