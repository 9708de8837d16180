package instrument

import (
	"debug/dwarf"
	"encoding/binary"
	"sort"
	"strings"
)

// MaxDebugSections bounds the DWARF (the .debug_* custom sections, summed)
// whose line table Instrument carries over to the instrumented code: more
// is dropped, as is DWARF that debug/dwarf cannot read.
const MaxDebugSections = 16 << 20

// maxLineRows bounds the rows of the rebuilt line table (a few bytes each
// in the output, tens in wazero once a trap looks one up).
const maxLineRows = 1 << 20

// anchor is where original code went: the code section payload offset
// orig of the input is out in the output, and so is every byte after it
// up to the next anchor (instrumentation inserts code only at anchors).
type anchor struct{ orig, out int }

// debugSections are the .debug_* custom sections of a module, by name.
type debugSections map[string][]byte

// size is the sections' total size.
func (d debugSections) size() int {
	n := 0
	for _, p := range d {
		n += len(p)
	}
	return n
}

// lineRow is one row of a line table, its address an output code offset.
type lineRow struct {
	addr      int
	file      string
	line, col int
}

// rebuildLines reads the line tables of the DWARF in secs, moves their
// addresses from the input's code to the output's through anchors (sorted
// by orig, as appendCode records them) and returns custom sections that
// describe the output's code with them: one compilation unit covering the
// original functions (codeEnd is where they end; the functions
// instrumentation adds have no lines) and one line table. Inlining,
// variables and types are not carried over: the result is what a stack
// trace needs (file:line:column of each frame). It returns nil when there
// are no usable lines. Malformed DWARF never panics: debug/dwarf is run
// under recover.
func rebuildLines(secs debugSections, anchors []anchor, codeEnd int) (out []byte) {
	rows, ok := readLines(secs, anchors, codeEnd)
	if !ok || len(rows) == 0 {
		return nil
	}
	return appendDWARF(nil, rows, codeEnd)
}

// readLines returns the rows of every line table in secs, moved to the
// output's code and sorted by address (one row per address: the last).
func readLines(secs debugSections, anchors []anchor, codeEnd int) (rows []lineRow, ok bool) {
	defer func() {
		if recover() != nil {
			rows, ok = nil, false
		}
	}()
	d, err := dwarf.New(secs[".debug_abbrev"], secs[".debug_aranges"], secs[".debug_frame"], secs[".debug_info"],
		secs[".debug_line"], secs[".debug_pubnames"], secs[".debug_ranges"], secs[".debug_str"])
	if err != nil {
		return nil, false
	}
	for _, name := range []string{".debug_addr", ".debug_line_str", ".debug_str_offsets", ".debug_rnglists"} {
		if p, ok := secs[name]; ok {
			if err := d.AddSection(name, p); err != nil {
				return nil, false
			}
		}
	}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, false
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		r.SkipChildren()
		if err != nil {
			return nil, false
		}
		if lr == nil {
			continue
		}
		var le dwarf.LineEntry
		for lr.Next(&le) == nil {
			if le.EndSequence || le.File == nil {
				continue
			}
			addr, ok := move(anchors, le.Address, codeEnd)
			if !ok {
				continue
			}
			if len(rows) == maxLineRows {
				return nil, false
			}
			rows = append(rows, lineRow{addr: addr, file: le.File.Name, line: le.Line, col: le.Column})
		}
	}
	// Sort by address; of rows at one address the last one counts.
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].addr < rows[j].addr })
	w := 0
	for i := range rows {
		if w > 0 && rows[w-1].addr == rows[i].addr {
			rows[w-1] = rows[i]
			continue
		}
		rows[w] = rows[i]
		w++
	}
	return rows[:w], true
}

// move returns where the input's code offset a is in the output's code,
// and false for an address outside every function body (a tombstone of
// code the linker removed, or garbage).
func move(anchors []anchor, a uint64, codeEnd int) (int, bool) {
	if a == 0 || a >= 1<<31 || len(anchors) == 0 {
		return 0, false
	}
	// The last anchor at or before a.
	k := sort.Search(len(anchors), func(k int) bool { return uint64(anchors[k].orig) > a }) - 1
	if k < 0 {
		return 0, false
	}
	out := anchors[k].out + int(a-uint64(anchors[k].orig))
	if out >= codeEnd {
		return 0, false
	}
	return out, true
}

// DWARF 4 constants used by appendDWARF.
const (
	dwTagCompileUnit = 0x11
	dwAtName         = 0x03
	dwAtStmtList     = 0x10
	dwAtLowPC        = 0x11
	dwAtHighPC       = 0x12
	dwFormAddr       = 0x01
	dwFormData4      = 0x06
	dwFormString     = 0x08
	dwFormSecOffset  = 0x17
	dwLNSCopy        = 0x01
	dwLNSAdvancePC   = 0x02
	dwLNSAdvanceLine = 0x03
	dwLNSSetFile     = 0x04
	dwLNSSetColumn   = 0x05
	dwLNEEndSequence = 0x01
	dwLNESetAddress  = 0x02
	lineOpcodeBase   = 13
	debugUnitName    = "wasmcp-instrumented"
)

// appendDWARF appends the .debug_abbrev, .debug_info and .debug_line
// custom sections for rows (sorted, distinct addresses below codeEnd).
// The compilation unit starts at address 1: wazero takes a range starting
// at 0 for a tombstone, and code offset 0 is the function count anyway.
func appendDWARF(out []byte, rows []lineRow, codeEnd int) []byte {
	abbrev := []byte{1, dwTagCompileUnit, 0, // code 1, no children
		dwAtName, dwFormString, dwAtStmtList, dwFormSecOffset, dwAtLowPC, dwFormAddr, dwAtHighPC, dwFormData4, 0, 0, 0}

	var die []byte
	die = append(die, 1)
	die = append(die, debugUnitName...)
	die = append(die, 0)
	die = binary.LittleEndian.AppendUint32(die, 0) // the line table at offset 0
	die = binary.LittleEndian.AppendUint32(die, 1)
	die = binary.LittleEndian.AppendUint32(die, uint32(codeEnd-1))
	var info []byte
	info = binary.LittleEndian.AppendUint32(info, uint32(2+4+1+len(die)))
	info = binary.LittleEndian.AppendUint16(info, 4)
	info = binary.LittleEndian.AppendUint32(info, 0) // abbrev offset
	info = append(info, 4)                           // address size
	info = append(info, die...)

	// The file table, in order of first use.
	files := map[string]int{}
	var names []string
	for _, r := range rows {
		if _, ok := files[r.file]; !ok {
			names = append(names, r.file)
			files[r.file] = len(names) // 1-based
		}
	}
	var hdr []byte                                             // after header_length
	hdr = append(hdr, 1, 1, 1, byte(0xfb), 14, lineOpcodeBase) // min_inst_length, max_ops, default_is_stmt, line_base -5, line_range, opcode_base
	hdr = append(hdr, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1)      // standard_opcode_lengths
	hdr = append(hdr, 0)                                       // no include directories
	for _, n := range names {
		hdr = append(hdr, strings.ReplaceAll(n, "\x00", "")...)
		hdr = append(hdr, 0, 0, 0, 0) // NUL, directory 0, mtime, length
	}
	hdr = append(hdr, 0)
	var prog []byte
	prog = append(prog, 0, 5, dwLNESetAddress)
	prog = binary.LittleEndian.AppendUint32(prog, uint32(rows[0].addr))
	addr, file, line, col := rows[0].addr, 1, 1, 0
	for _, r := range rows {
		if r.addr > addr {
			prog = append(prog, dwLNSAdvancePC)
			prog = appendU32(prog, uint32(r.addr-addr))
			addr = r.addr
		}
		if f := files[r.file]; f != file {
			prog = append(prog, dwLNSSetFile)
			prog = appendU32(prog, uint32(f))
			file = f
		}
		if r.line != line {
			prog = append(prog, dwLNSAdvanceLine)
			prog = appendS64(prog, int64(r.line)-int64(line))
			line = r.line
		}
		if r.col != col && r.col >= 0 {
			prog = append(prog, dwLNSSetColumn)
			prog = appendU32(prog, uint32(r.col))
			col = r.col
		}
		prog = append(prog, dwLNSCopy)
	}
	if codeEnd > addr {
		prog = append(prog, dwLNSAdvancePC)
		prog = appendU32(prog, uint32(codeEnd-addr))
	}
	prog = append(prog, 0, 1, dwLNEEndSequence)
	var line4 []byte
	line4 = binary.LittleEndian.AppendUint32(line4, uint32(2+4+len(hdr)+len(prog)))
	line4 = binary.LittleEndian.AppendUint16(line4, 4)
	line4 = binary.LittleEndian.AppendUint32(line4, uint32(len(hdr)))
	line4 = append(line4, hdr...)
	line4 = append(line4, prog...)

	out = appendCustom(out, ".debug_abbrev", abbrev)
	out = appendCustom(out, ".debug_info", info)
	return appendCustom(out, ".debug_line", line4)
}

// appendCustom appends a custom section.
func appendCustom(out []byte, name string, data []byte) []byte {
	out = append(out, secCustom)
	out = appendU32(out, uint32(lenU32(uint32(len(name)))+len(name)+len(data)))
	out = appendU32(out, uint32(len(name)))
	out = append(out, name...)
	return append(out, data...)
}

// appendS64 appends v as a signed LEB128.
func appendS64(out []byte, v int64) []byte {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v == 0 && b&0x40 == 0 || v == -1 && b&0x40 != 0 {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}
