package component

import (
	"bytes"
	"fmt"
)

// Limits of the decoder. A component past one of them is refused with an
// *Error naming the limit; they are far above what toolchains produce.
const (
	maxName     = 1 << 16 // bytes in one name
	maxItems    = 1 << 17 // definitions in one index space
	maxNesting  = 8       // nested components and type declarators
	maxTypeCost = 1 << 16 // nodes in one value type's expansion
	maxDepth    = 64      // nesting depth of one value type
	maxFlags    = 32      // labels of a flags type
	maxFields   = 1 << 12 // fields, cases, parameters of one type
)

var (
	magic    = []byte{0x00, 0x61, 0x73, 0x6d}
	preamble = []byte{0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00}
)

// IsComponent reports whether b starts like a component binary (rather
// than a core module).
func IsComponent(b []byte) bool {
	return len(b) >= 8 && bytes.Equal(b[:4], magic) && b[6] == 0x01 && b[7] == 0x00
}

// Decode decodes a component binary. It checks every index against its
// index space, refuses types that are too deep or too large, and refuses
// the features outside the MVP (see ErrUnsupported); it never panics on
// any input. Nested components are decoded too. The core modules are not
// validated here: the core engine compiles them.
func Decode(b []byte) (*Component, error) {
	return decode(b, 0, nil, 0)
}

// scope is a type index space: a component's, or that of an instance or
// component type being declared. Outer aliases walk parent.
type scope struct {
	types     []*Type
	coreTypes int
	parent    *scope
	comp      *decoder // the component decoder when this is a component's own space
}

type decoder struct {
	c      *Component
	parent *decoder
	depth  int
	sc     *scope
}

func decode(b []byte, off int, parent *decoder, depth int) (*Component, error) {
	r := &reader{b: b, off: off}
	if len(b) < 8 || !bytes.Equal(b[:4], magic) {
		return nil, r.errf("not a WebAssembly binary")
	}
	if b[6] == 0 && b[7] == 0 {
		return nil, r.errf("a core module, not a component")
	}
	if !bytes.Equal(b[:8], preamble) {
		return nil, r.errf("unsupported component binary version %x (want 0d000100)", b[4:8])
	}
	r.pos = 8
	d := &decoder{c: &Component{}, parent: parent, depth: depth}
	d.sc = &scope{comp: d}
	if parent != nil {
		d.sc.parent = parent.sc
	}
	for r.left() > 0 {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		start := r.pos
		body, err := r.bytes(int(size))
		if err != nil {
			return nil, err
		}
		sr := &reader{b: body, off: r.off + start}
		if err := d.section(id, sr); err != nil {
			return nil, err
		}
		if sr.left() != 0 && id != 0 && id != 1 && id != 4 {
			return nil, sr.errf("section %d has %d trailing bytes", id, sr.left())
		}
	}
	d.c.Types = d.sc.types
	return d.c, nil
}

func (d *decoder) section(id byte, r *reader) error {
	switch id {
	case 0:
		name, err := r.name()
		if err != nil {
			return err
		}
		d.c.Custom = append(d.c.Custom, CustomSection{Name: name, Data: r.b[r.pos:]})
		r.pos = len(r.b)
		return nil
	case 1:
		if len(r.b) < 8 || !bytes.Equal(r.b[:4], magic) || r.b[4] != 1 || r.b[6] != 0 {
			return r.errf("core module section does not hold a core module")
		}
		if err := d.room(len(d.c.Modules), "core module"); err != nil {
			return r.errf("%v", err)
		}
		d.c.Modules = append(d.c.Modules, r.b)
		r.pos = len(r.b)
		return nil
	case 4:
		if d.depth+1 >= maxNesting {
			return r.errf("components nested deeper than %d", maxNesting)
		}
		nc, err := decode(r.b, r.off, d, d.depth+1)
		if err != nil {
			return err
		}
		d.c.Components = append(d.c.Components, nc)
		r.pos = len(r.b)
		return nil
	case 9:
		return r.unsupported("a component start function")
	case 12:
		return r.unsupported("a component value definition")
	}
	var item func(*reader) error
	switch id {
	case 2:
		item = d.coreInstance
	case 3:
		item = func(r *reader) error { return d.coreType(r, d.sc) }
	case 5:
		item = d.instance
	case 6:
		item = d.alias
	case 7:
		item = func(r *reader) error {
			t, err := d.deftype(r, d.sc)
			if err != nil {
				return err
			}
			return d.addType(r, t)
		}
	case 8:
		item = d.canon
	case 10:
		item = d.importItem
	case 11:
		item = d.exportItem
	default:
		return r.errf("unknown section id %d", id)
	}
	n, err := r.count()
	if err != nil {
		return err
	}
	for range n {
		if err := item(r); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) room(n int, what string) error {
	if n >= maxItems {
		return fmt.Errorf("more than %d %s definitions", maxItems, what)
	}
	return nil
}

func (d *decoder) addType(r *reader, t *Type) error {
	if err := d.room(len(d.sc.types), "type"); err != nil {
		return r.errf("%v", err)
	}
	d.sc.types = append(d.sc.types, t)
	return nil
}

// sortIndex reads a sort and an index in that sort's index space.
func (d *decoder) sortIndex(r *reader) (Sort, int, error) {
	s, err := d.sort(r)
	if err != nil {
		return 0, 0, err
	}
	i, err := r.index(s.String(), d.size(s))
	return s, i, err
}

func (d *decoder) sort(r *reader) (Sort, error) {
	b, err := r.byte()
	if err != nil {
		return 0, err
	}
	switch b {
	case 0x00:
		return d.coreSort(r)
	case 0x01:
		return SortFunc, nil
	case 0x02:
		return SortValue, r.unsupported("the value sort")
	case 0x03:
		return SortType, nil
	case 0x04:
		return SortComponent, nil
	case 0x05:
		return SortInstance, nil
	}
	return 0, r.errf("unknown sort %#x", b)
}

func (d *decoder) coreSort(r *reader) (Sort, error) {
	b, err := r.byte()
	if err != nil {
		return 0, err
	}
	switch b {
	case 0x00:
		return SortCoreFunc, nil
	case 0x01:
		return SortCoreTable, nil
	case 0x02:
		return SortCoreMemory, nil
	case 0x03:
		return SortCoreGlobal, nil
	case 0x04:
		return 0, r.unsupported("the core tag sort (exception handling)")
	case 0x10:
		return SortCoreType, nil
	case 0x11:
		return SortModule, nil
	case 0x12:
		return SortCoreInstance, nil
	}
	return 0, r.errf("unknown core sort %#x", b)
}

// size is the current size of the index space of s.
func (d *decoder) size(s Sort) int {
	c := d.c
	switch s {
	case SortFunc:
		return len(c.Funcs)
	case SortType:
		return len(d.sc.types)
	case SortComponent:
		return len(c.Components)
	case SortInstance:
		return len(c.Instances)
	case SortModule:
		return len(c.Modules)
	case SortCoreFunc:
		return len(c.CoreFuncs)
	case SortCoreTable:
		return len(c.CoreTables)
	case SortCoreMemory:
		return len(c.CoreMemories)
	case SortCoreGlobal:
		return len(c.CoreGlobals)
	case SortCoreType:
		return d.sc.coreTypes
	case SortCoreInstance:
		return len(c.CoreInstances)
	}
	return 0
}

func (d *decoder) coreInstance(r *reader) error {
	if err := d.room(len(d.c.CoreInstances), "core instance"); err != nil {
		return r.errf("%v", err)
	}
	b, err := r.byte()
	if err != nil {
		return err
	}
	var ci CoreInstance
	switch b {
	case 0x00:
		if ci.Module, err = r.index("core module", len(d.c.Modules)); err != nil {
			return err
		}
		n, err := r.count()
		if err != nil {
			return err
		}
		for range n {
			name, err := r.name()
			if err != nil {
				return err
			}
			s, err := r.byte()
			if err != nil {
				return err
			}
			if s != 0x12 {
				return r.errf("core instantiation argument %q is not an instance (sort %#x)", name, s)
			}
			i, err := r.index("core instance", len(d.c.CoreInstances))
			if err != nil {
				return err
			}
			ci.Args = append(ci.Args, CoreArg{Name: name, Instance: i})
		}
	case 0x01:
		ci.Module = -1
		n, err := r.count()
		if err != nil {
			return err
		}
		for range n {
			name, err := r.name()
			if err != nil {
				return err
			}
			s, err := d.coreSort(r)
			if err != nil {
				return err
			}
			switch s {
			case SortCoreFunc, SortCoreTable, SortCoreMemory, SortCoreGlobal:
			default:
				return r.errf("core instance export %q of sort %v", name, s)
			}
			i, err := r.index(s.String(), d.size(s))
			if err != nil {
				return err
			}
			ci.Exports = append(ci.Exports, CoreExport{Name: name, Sort: s, Index: i})
		}
	default:
		return r.errf("unknown core instance form %#x", b)
	}
	d.c.CoreInstances = append(d.c.CoreInstances, ci)
	return nil
}

func (d *decoder) instance(r *reader) error {
	if err := d.room(len(d.c.Instances), "instance"); err != nil {
		return r.errf("%v", err)
	}
	b, err := r.byte()
	if err != nil {
		return err
	}
	var in Instance
	switch b {
	case 0x00:
		in.Kind = InstanceInstantiate
		if in.Component, err = r.index("component", len(d.c.Components)); err != nil {
			return err
		}
		n, err := r.count()
		if err != nil {
			return err
		}
		for range n {
			name, err := r.name()
			if err != nil {
				return err
			}
			s, i, err := d.sortIndex(r)
			if err != nil {
				return err
			}
			in.Args = append(in.Args, Arg{Name: name, Sort: s, Index: i})
		}
		in.Type = &Type{Kind: InstanceKind, Exports: exportsOf(d.c.Components[in.Component])}
	case 0x01:
		in.Kind = InstanceExports
		n, err := r.count()
		if err != nil {
			return err
		}
		t := &Type{Kind: InstanceKind}
		for range n {
			name, err := d.externName(r)
			if err != nil {
				return err
			}
			s, i, err := d.sortIndex(r)
			if err != nil {
				return err
			}
			in.Args = append(in.Args, Arg{Name: name, Sort: s, Index: i})
			t.Exports = append(t.Exports, Extern{Name: name, Sort: s, Type: d.typeOf(s, i)})
			if s == SortType {
				d.nameType(d.sc.types[i], name)
			}
		}
		in.Type = t
	default:
		return r.errf("unknown instance form %#x", b)
	}
	d.c.Instances = append(d.c.Instances, in)
	return nil
}

func exportsOf(c *Component) []Extern {
	out := make([]Extern, len(c.Exports))
	for i, e := range c.Exports {
		out[i] = e.Extern
	}
	return out
}

// typeOf is the type of definition i of sort s, for instance and export
// descriptions (nil where there is none).
func (d *decoder) typeOf(s Sort, i int) *Type {
	switch s {
	case SortFunc:
		return d.c.Funcs[i].Type
	case SortType:
		return d.sc.types[i]
	case SortInstance:
		return d.c.Instances[i].Type
	case SortComponent:
		return &Type{Kind: ComponentKind, Exports: exportsOf(d.c.Components[i])}
	}
	return nil
}

func (d *decoder) nameType(t *Type, name string) {
	if t.Kind == Resource && t.Res != nil && t.Res.Name == "" {
		t.Res.Name = name
	}
	if t.Name == "" && !t.Kind.Primitive() {
		t.Name = name
	}
}

// externName reads an importname' or exportname': a discriminant byte
// (0x00 plain, 0x01 interface name in older encodings) then the name; a
// trailing version suffix (0x02 form) is appended as "@version" when it
// is not already part of the name.
func (d *decoder) externName(r *reader) (string, error) {
	b, err := r.byte()
	if err != nil {
		return "", err
	}
	switch b {
	case 0x00, 0x01:
		return r.name()
	case 0x02:
		name, err := r.name()
		if err != nil {
			return "", err
		}
		v, err := r.name()
		if err != nil {
			return "", err
		}
		return name + "@" + v, nil
	}
	return "", r.errf("unknown name form %#x", b)
}

func (d *decoder) alias(r *reader) error {
	s, err := d.sort(r)
	if err != nil {
		return err
	}
	if err := d.room(d.size(s), s.String()); err != nil {
		return r.errf("%v", err)
	}
	t, err := r.byte()
	if err != nil {
		return err
	}
	switch t {
	case 0x00: // export of a component instance
		i, err := r.index("instance", len(d.c.Instances))
		if err != nil {
			return err
		}
		name, err := r.name()
		if err != nil {
			return err
		}
		var ext *Extern
		for k, e := range d.c.Instances[i].Type.Exports {
			if e.Name == name {
				ext = &d.c.Instances[i].Type.Exports[k]
			}
		}
		if ext == nil || ext.Sort != s {
			return r.errf("instance %d has no %v export %q", i, s, name)
		}
		switch s {
		case SortFunc:
			d.c.Funcs = append(d.c.Funcs, FuncDef{Kind: FuncAlias, Instance: i, Name: name, Type: ext.Type})
		case SortType:
			d.sc.types = append(d.sc.types, ext.Type)
		case SortInstance:
			d.c.Instances = append(d.c.Instances, Instance{Kind: InstanceAlias, Instance: i, Name: name, Type: ext.Type})
		default:
			return r.unsupported("an alias of a " + s.String() + " export")
		}
	case 0x01: // export of a core instance
		i, err := r.index("core instance", len(d.c.CoreInstances))
		if err != nil {
			return err
		}
		name, err := r.name()
		if err != nil {
			return err
		}
		ref := CoreExportRef{Instance: i, Name: name}
		switch s {
		case SortCoreFunc:
			d.c.CoreFuncs = append(d.c.CoreFuncs, CoreFunc{Kind: CoreFuncAlias, Alias: ref})
		case SortCoreMemory:
			d.c.CoreMemories = append(d.c.CoreMemories, ref)
		case SortCoreTable:
			d.c.CoreTables = append(d.c.CoreTables, ref)
		case SortCoreGlobal:
			d.c.CoreGlobals = append(d.c.CoreGlobals, ref)
		default:
			return r.errf("core export alias of sort %v", s)
		}
	case 0x02: // outer
		ct, err := r.u32()
		if err != nil {
			return err
		}
		idx, err := r.u32()
		if err != nil {
			return err
		}
		outer := d
		for range ct {
			if outer = outer.parent; outer == nil {
				return r.errf("outer alias count %d beyond the enclosing components", ct)
			}
		}
		switch s {
		case SortType:
			if int64(idx) >= int64(len(outer.sc.types)) {
				return r.errf("outer type index %d out of range", idx)
			}
			d.sc.types = append(d.sc.types, outer.sc.types[idx])
		case SortCoreType:
			if int64(idx) >= int64(outer.sc.coreTypes) {
				return r.errf("outer core type index %d out of range", idx)
			}
			d.sc.coreTypes++
		case SortModule:
			if int64(idx) >= int64(len(outer.c.Modules)) {
				return r.errf("outer core module index %d out of range", idx)
			}
			d.c.Modules = append(d.c.Modules, outer.c.Modules[idx])
		case SortComponent:
			if int64(idx) >= int64(len(outer.c.Components)) {
				return r.errf("outer component index %d out of range", idx)
			}
			d.c.Components = append(d.c.Components, outer.c.Components[idx])
		default:
			return r.errf("outer alias of sort %v", s)
		}
	default:
		return r.errf("unknown alias target %#x", t)
	}
	return nil
}

func (d *decoder) canon(r *reader) error {
	op, err := r.byte()
	if err != nil {
		return err
	}
	switch op {
	case 0x00, 0x01:
		if err := d.room(max(len(d.c.Funcs), len(d.c.CoreFuncs)), "function"); err != nil {
			return r.errf("%v", err)
		}
		if b, err := r.byte(); err != nil {
			return err
		} else if b != 0x00 {
			return r.errf("canon lift/lower of sort %#x", b)
		}
		var f int
		if op == 0x00 {
			f, err = r.index("core func", len(d.c.CoreFuncs))
		} else {
			f, err = r.index("func", len(d.c.Funcs))
		}
		if err != nil {
			return err
		}
		opts, err := d.options(r)
		if err != nil {
			return err
		}
		if op == 0x01 {
			d.c.CoreFuncs = append(d.c.CoreFuncs, CoreFunc{Kind: CoreFuncLower, Func: f, Opts: opts})
			return nil
		}
		ti, err := r.index("type", len(d.sc.types))
		if err != nil {
			return err
		}
		ft := d.sc.types[ti]
		if ft.Kind != Func {
			return r.errf("canon lift with type %d, a %v, not a function type", ti, ft.Kind)
		}
		d.c.Funcs = append(d.c.Funcs, FuncDef{Kind: FuncLift, CoreFunc: f, Opts: opts, Type: ft})
		return nil
	case 0x02, 0x03, 0x04:
		if err := d.room(len(d.c.CoreFuncs), "core func"); err != nil {
			return r.errf("%v", err)
		}
		ti, err := r.index("type", len(d.sc.types))
		if err != nil {
			return err
		}
		t := d.sc.types[ti]
		if t.Kind != Resource {
			return r.errf("resource built-in on type %d, a %v, not a resource", ti, t.Kind)
		}
		kind := map[byte]CoreFuncKind{0x02: CoreFuncResourceNew, 0x03: CoreFuncResourceDrop, 0x04: CoreFuncResourceRep}[op]
		if kind != CoreFuncResourceDrop && t.Res.Imported {
			return r.errf("resource.new/rep of an imported resource")
		}
		d.c.CoreFuncs = append(d.c.CoreFuncs, CoreFunc{Kind: kind, Resource: t.Res, Opts: Options{Memory: -1, Realloc: -1, PostReturn: -1}})
		return nil
	case 0x07:
		return r.unsupported("canon resource.drop async")
	case 0x05, 0x06, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12,
		0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20,
		0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28:
		return r.unsupported(fmt.Sprintf("canon built-in %#x (tasks, streams, futures, error-context or threads)", op))
	}
	return r.errf("unknown canon opcode %#x", op)
}

func (d *decoder) options(r *reader) (Options, error) {
	o := Options{Memory: -1, Realloc: -1, PostReturn: -1}
	n, err := r.count()
	if err != nil {
		return o, err
	}
	seenEnc := false
	for range n {
		b, err := r.byte()
		if err != nil {
			return o, err
		}
		switch b {
		case 0x00, 0x01, 0x02:
			if seenEnc {
				return o, r.errf("string-encoding given twice")
			}
			seenEnc = true
			o.Encoding = Encoding(b)
		case 0x03:
			if o.Memory >= 0 {
				return o, r.errf("memory given twice")
			}
			if o.Memory, err = r.index("core memory", len(d.c.CoreMemories)); err != nil {
				return o, err
			}
		case 0x04:
			if o.Realloc >= 0 {
				return o, r.errf("realloc given twice")
			}
			if o.Realloc, err = r.index("core func", len(d.c.CoreFuncs)); err != nil {
				return o, err
			}
		case 0x05:
			if o.PostReturn >= 0 {
				return o, r.errf("post-return given twice")
			}
			if o.PostReturn, err = r.index("core func", len(d.c.CoreFuncs)); err != nil {
				return o, err
			}
		case 0x06:
			return o, r.unsupported("the async canon option")
		case 0x07:
			return o, r.unsupported("the callback canon option")
		default:
			return o, r.errf("unknown canon option %#x", b)
		}
	}
	return o, nil
}

func (d *decoder) importItem(r *reader) error {
	name, err := d.externName(r)
	if err != nil {
		return err
	}
	s, t, err := d.externDesc(r, d.sc, name)
	if err != nil {
		return err
	}
	idx := len(d.c.Imports)
	if err := d.room(idx, "import"); err != nil {
		return r.errf("%v", err)
	}
	d.c.Imports = append(d.c.Imports, Import{Extern{Name: name, Sort: s, Type: t}})
	switch s {
	case SortFunc:
		d.c.Funcs = append(d.c.Funcs, FuncDef{Kind: FuncImport, Import: idx, Type: t})
	case SortInstance:
		d.c.Instances = append(d.c.Instances, Instance{Kind: InstanceImport, Import: idx, Type: t})
	case SortType:
		d.sc.types = append(d.sc.types, t)
	default:
		return r.unsupported("importing a " + s.String())
	}
	return nil
}

func (d *decoder) exportItem(r *reader) error {
	name, err := d.externName(r)
	if err != nil {
		return err
	}
	s, i, err := d.sortIndex(r)
	if err != nil {
		return err
	}
	if err := d.room(d.size(s), s.String()); err != nil {
		return r.errf("%v", err)
	}
	t := d.typeOf(s, i)
	has, err := r.byte()
	if err != nil {
		return err
	}
	switch has {
	case 0x00:
	case 0x01:
		as, at, err := d.externDesc(r, d.sc, name)
		if err != nil {
			return err
		}
		if as != s {
			return r.errf("export %q of a %v ascribed a %v type", name, s, as)
		}
		if at != nil && s != SortType {
			t = at
		}
	default:
		return r.errf("bad export type ascription flag %#x", has)
	}
	// An export also defines a new index in its sort's space.
	switch s {
	case SortFunc:
		f := d.c.Funcs[i]
		f.Type = t
		d.c.Funcs = append(d.c.Funcs, f)
	case SortType:
		d.nameType(t, name)
		d.sc.types = append(d.sc.types, t)
	case SortInstance:
		in := d.c.Instances[i]
		in.Type = t
		d.c.Instances = append(d.c.Instances, in)
	case SortComponent:
		d.c.Components = append(d.c.Components, d.c.Components[i])
	case SortModule:
		d.c.Modules = append(d.c.Modules, d.c.Modules[i])
	default:
		return r.errf("export %q of sort %v", name, s)
	}
	d.c.Exports = append(d.c.Exports, Export{Extern: Extern{Name: name, Sort: s, Type: t}, Index: i})
	return nil
}

// externDesc reads an externdesc in scope sc. name names a resource type
// it declares.
func (d *decoder) externDesc(r *reader, sc *scope, name string) (Sort, *Type, error) {
	b, err := r.byte()
	if err != nil {
		return 0, nil, err
	}
	want := func(k Kind) (*Type, error) {
		i, err := r.index("type", len(sc.types))
		if err != nil {
			return nil, err
		}
		if sc.types[i].Kind != k {
			return nil, r.errf("type %d is a %v, not a %v type", i, sc.types[i].Kind, k)
		}
		return sc.types[i], nil
	}
	switch b {
	case 0x00:
		if c, err := r.byte(); err != nil {
			return 0, nil, err
		} else if c != 0x11 {
			return 0, nil, r.errf("core extern of sort %#x", c)
		}
		if _, err := r.index("core type", sc.coreTypes); err != nil {
			return 0, nil, err
		}
		return SortModule, nil, nil
	case 0x01:
		t, err := want(Func)
		return SortFunc, t, err
	case 0x02:
		return SortValue, nil, r.unsupported("a value import or export")
	case 0x03:
		bound, err := r.byte()
		if err != nil {
			return 0, nil, err
		}
		switch bound {
		case 0x00:
			i, err := r.index("type", len(sc.types))
			if err != nil {
				return 0, nil, err
			}
			t := sc.types[i]
			d.nameType(t, name)
			return SortType, t, nil
		case 0x01:
			return SortType, &Type{Kind: Resource, Name: name, Res: &ResourceType{Name: name, Dtor: -1, Imported: true}}, nil
		}
		return 0, nil, r.errf("unknown type bound %#x", bound)
	case 0x04:
		t, err := want(ComponentKind)
		return SortComponent, t, err
	case 0x05:
		t, err := want(InstanceKind)
		return SortInstance, t, err
	}
	return 0, nil, r.errf("unknown extern kind %#x", b)
}

// coreType reads a core:type into sc (only counted: core types matter to
// the core engine, which validates the modules themselves).
func (d *decoder) coreType(r *reader, sc *scope) error {
	if sc.coreTypes >= maxItems {
		return r.errf("more than %d core types", maxItems)
	}
	b, err := r.byte()
	if err != nil {
		return err
	}
	switch b {
	case 0x60:
		if err := skipCoreFuncType(r); err != nil {
			return err
		}
	case 0x50:
		if d.depth+1 >= maxNesting {
			return r.errf("type declarators nested deeper than %d", maxNesting)
		}
		inner := &scope{parent: sc}
		n, err := r.count()
		if err != nil {
			return err
		}
		for range n {
			k, err := r.byte()
			if err != nil {
				return err
			}
			switch k {
			case 0x00: // import
				if _, err := r.name(); err != nil {
					return err
				}
				if _, err := r.name(); err != nil {
					return err
				}
				if err := skipCoreImportDesc(r, inner); err != nil {
					return err
				}
			case 0x01: // type
				c, err := r.byte()
				if err != nil {
					return err
				}
				if c != 0x60 {
					return r.errf("module type declares a core type %#x", c)
				}
				if err := skipCoreFuncType(r); err != nil {
					return err
				}
				inner.coreTypes++
			case 0x02: // alias outer
				if s, err := d.coreSort(r); err != nil {
					return err
				} else if s != SortCoreType {
					return r.errf("module type aliases a %v", s)
				}
				if t, err := r.byte(); err != nil {
					return err
				} else if t != 0x01 {
					return r.errf("module type alias target %#x", t)
				}
				ct, err := r.u32()
				if err != nil {
					return err
				}
				if ct != 1 {
					return r.errf("module type outer alias count %d", ct)
				}
				if _, err := r.index("core type", sc.coreTypes); err != nil {
					return err
				}
				inner.coreTypes++
			case 0x03: // export
				if _, err := r.name(); err != nil {
					return err
				}
				if err := skipCoreImportDesc(r, inner); err != nil {
					return err
				}
			default:
				return r.errf("unknown module type declarator %#x", k)
			}
		}
	case 0x4e, 0x4f, 0x5e, 0x5f:
		return r.unsupported("a GC core type")
	default:
		return r.errf("unknown core type form %#x", b)
	}
	sc.coreTypes++
	return nil
}

func skipCoreValType(r *reader) error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	switch b {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		return nil
	}
	return r.errf("unsupported core value type %#x", b)
}

func skipCoreFuncType(r *reader) error {
	for range 2 {
		n, err := r.count()
		if err != nil {
			return err
		}
		for range n {
			if err := skipCoreValType(r); err != nil {
				return err
			}
		}
	}
	return nil
}

func skipLimits(r *reader) error {
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if flags > 0x07 {
		return r.errf("bad limits flags %#x", flags)
	}
	read := r.u64
	if _, err := read(); err != nil {
		return err
	}
	if flags&1 != 0 {
		if _, err := read(); err != nil {
			return err
		}
	}
	return nil
}

func skipCoreImportDesc(r *reader, sc *scope) error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	switch b {
	case 0x00:
		_, err := r.index("core type", sc.coreTypes)
		return err
	case 0x01:
		if err := skipCoreValType(r); err != nil {
			return err
		}
		return skipLimits(r)
	case 0x02:
		return skipLimits(r)
	case 0x03:
		if err := skipCoreValType(r); err != nil {
			return err
		}
		m, err := r.byte()
		if err != nil {
			return err
		}
		if m > 1 {
			return r.errf("bad global mutability %#x", m)
		}
		return nil
	case 0x04:
		return r.unsupported("a core tag (exception handling)")
	}
	return r.errf("unknown core import kind %#x", b)
}
