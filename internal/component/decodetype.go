package component

var primOps = map[byte]Kind{
	0x7f: Bool, 0x7e: S8, 0x7d: U8, 0x7c: S16, 0x7b: U16, 0x7a: S32, 0x79: U32,
	0x78: S64, 0x77: U64, 0x76: F32, 0x75: F64, 0x74: Char, 0x73: String,
}

// prims holds one shared *Type per primitive kind.
var prims = func() map[Kind]*Type {
	m := map[Kind]*Type{}
	for _, k := range primOps {
		m[k] = &Type{Kind: k, cost: 1, depth: 1}
	}
	return m
}()

// Prim returns the shared type of primitive kind k (nil if k is not primitive).
func Prim(k Kind) *Type { return prims[k] }

// deftype reads a type definition in scope sc.
func (d *decoder) deftype(r *reader, sc *scope) (*Type, error) {
	b, err := r.peek()
	if err != nil {
		return nil, err
	}
	switch b {
	case 0x40:
		r.pos++
		return d.functype(r, sc)
	case 0x43:
		return nil, r.unsupported("an async function type")
	case 0x41, 0x42:
		r.pos++
		return d.declType(r, sc, b == 0x41)
	case 0x3f:
		r.pos++
		rep, err := r.byte()
		if err != nil {
			return nil, err
		}
		if rep != 0x7f {
			return nil, r.errf("resource representation %#x is not i32", rep)
		}
		res := &ResourceType{Dtor: -1}
		has, err := r.byte()
		if err != nil {
			return nil, err
		}
		switch has {
		case 0x00:
		case 0x01:
			f, err := r.index("core func", len(d.c.CoreFuncs))
			if err != nil {
				return nil, err
			}
			res.Dtor = int64(f)
		default:
			return nil, r.errf("bad resource destructor flag %#x", has)
		}
		if sc.comp == nil {
			return nil, r.errf("resource type defined inside a type declarator")
		}
		return &Type{Kind: Resource, Res: res, cost: 1}, nil
	case 0x3e:
		return nil, r.unsupported("an async resource type")
	}
	return d.defvaltype(r, sc)
}

func (d *decoder) functype(r *reader, sc *scope) (*Type, error) {
	n, err := r.count()
	if err != nil {
		return nil, err
	}
	if n > maxFields {
		return nil, r.errf("function with %d parameters over the limit of %d", n, maxFields)
	}
	t := &Type{Kind: Func, cost: 1}
	seen := map[string]bool{}
	for range n {
		name, err := r.name()
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, r.errf("parameter %q given twice", name)
		}
		seen[name] = true
		vt, err := d.valtype(r, sc)
		if err != nil {
			return nil, err
		}
		t.Params = append(t.Params, Field{Name: name, Type: vt})
	}
	b, err := r.byte()
	if err != nil {
		return nil, err
	}
	switch b {
	case 0x00:
		if t.Result, err = d.valtype(r, sc); err != nil {
			return nil, err
		}
	case 0x01:
		m, err := r.count()
		if err != nil {
			return nil, err
		}
		if m != 0 {
			return nil, r.errf("named function results (a pre-0.2 encoding) are not supported")
		}
	default:
		return nil, r.errf("bad function result form %#x", b)
	}
	return t, nil
}

// valtype reads a valtype: a primitive opcode or the index of a defined
// value type in sc.
func (d *decoder) valtype(r *reader, sc *scope) (*Type, error) {
	b, err := r.peek()
	if err != nil {
		return nil, err
	}
	if b >= 0x40 && b < 0x80 {
		r.pos++
		if k, ok := primOps[b]; ok {
			return prims[k], nil
		}
		if b == 0x64 {
			return nil, r.unsupported("the error-context type")
		}
		return nil, r.errf("unknown value type %#x", b)
	}
	i, err := r.s33()
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= int64(len(sc.types)) {
		return nil, r.errf("type index %d out of range (%d defined)", i, len(sc.types))
	}
	t := sc.types[i]
	if !t.IsValue() {
		return nil, r.errf("type %d is a %v, not a value type", i, t.Kind)
	}
	return t, nil
}

func (d *decoder) labels(r *reader, what string, limit int) ([]string, error) {
	n, err := r.count()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, r.errf("%s with no labels", what)
	}
	if n > limit {
		return nil, r.errf("%s with %d labels over the limit of %d", what, n, limit)
	}
	out := make([]string, 0, n)
	seen := map[string]bool{}
	for range n {
		l, err := r.name()
		if err != nil {
			return nil, err
		}
		if seen[l] {
			return nil, r.errf("%s label %q given twice", what, l)
		}
		seen[l] = true
		out = append(out, l)
	}
	return out, nil
}

func (d *decoder) optValtype(r *reader, sc *scope) (*Type, error) {
	b, err := r.byte()
	if err != nil {
		return nil, err
	}
	switch b {
	case 0x00:
		return nil, nil
	case 0x01:
		return d.valtype(r, sc)
	}
	return nil, r.errf("bad optional type flag %#x", b)
}

func (d *decoder) defvaltype(r *reader, sc *scope) (*Type, error) {
	b, err := r.byte()
	if err != nil {
		return nil, err
	}
	if k, ok := primOps[b]; ok {
		return prims[k], nil
	}
	var t *Type
	switch b {
	case 0x72, 0x71:
		kind := Record
		what := "record"
		if b == 0x71 {
			kind, what = Variant, "variant"
		}
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, r.errf("%s with no %s", what, map[bool]string{true: "fields", false: "cases"}[kind == Record])
		}
		if n > maxFields {
			return nil, r.errf("%s with %d members over the limit of %d", what, n, maxFields)
		}
		t = &Type{Kind: kind}
		seen := map[string]bool{}
		for range n {
			name, err := r.name()
			if err != nil {
				return nil, err
			}
			if seen[name] {
				return nil, r.errf("%s member %q given twice", what, name)
			}
			seen[name] = true
			var ft *Type
			if kind == Record {
				ft, err = d.valtype(r, sc)
			} else {
				ft, err = d.optValtype(r, sc)
				if err == nil {
					var refines byte
					if refines, err = r.byte(); err == nil && refines != 0x00 {
						err = r.errf("variant case refinement is not supported")
					}
				}
			}
			if err != nil {
				return nil, err
			}
			t.Fields = append(t.Fields, Field{Name: name, Type: ft})
		}
	case 0x70:
		e, err := d.valtype(r, sc)
		if err != nil {
			return nil, err
		}
		t = &Type{Kind: List, Elem: e}
	case 0x67:
		return nil, r.unsupported("a fixed-length list")
	case 0x6f:
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, r.errf("tuple with no elements")
		}
		if n > maxFields {
			return nil, r.errf("tuple with %d elements over the limit of %d", n, maxFields)
		}
		t = &Type{Kind: Tuple}
		for range n {
			e, err := d.valtype(r, sc)
			if err != nil {
				return nil, err
			}
			t.Fields = append(t.Fields, Field{Type: e})
		}
	case 0x6e:
		l, err := d.labels(r, "flags", maxFlags)
		if err != nil {
			return nil, err
		}
		t = &Type{Kind: Flags, Names: l}
	case 0x6d:
		l, err := d.labels(r, "enum", maxFields)
		if err != nil {
			return nil, err
		}
		t = &Type{Kind: Enum, Names: l}
	case 0x6c:
		return nil, r.errf("the union type (a pre-0.2 encoding) is not supported")
	case 0x6b:
		e, err := d.valtype(r, sc)
		if err != nil {
			return nil, err
		}
		t = &Type{Kind: Option, Elem: e}
	case 0x6a:
		ok, err := d.optValtype(r, sc)
		if err != nil {
			return nil, err
		}
		e, err := d.optValtype(r, sc)
		if err != nil {
			return nil, err
		}
		t = &Type{Kind: Result, Elem: ok, Err: e}
	case 0x69, 0x68:
		i, err := r.index("type", len(sc.types))
		if err != nil {
			return nil, err
		}
		rt := sc.types[i]
		if rt.Kind != Resource {
			return nil, r.errf("handle to type %d, a %v, not a resource", i, rt.Kind)
		}
		t = &Type{Kind: Own, Res: rt.Res}
		if b == 0x68 {
			t.Kind = Borrow
		}
	case 0x66:
		return nil, r.unsupported("the stream type")
	case 0x65:
		return nil, r.unsupported("the future type")
	case 0x64:
		return nil, r.unsupported("the error-context type")
	default:
		return nil, r.errf("unknown type form %#x", b)
	}
	if err := t.measure(); err != nil {
		return nil, r.errf("%v", err)
	}
	return t, nil
}

type typeLimitError string

func (e typeLimitError) Error() string { return string(e) }

// measure computes t's cost from its members' and refuses a type past
// the limits.
func (t *Type) measure() error {
	cost, depth := 1, 0
	add := func(m *Type) {
		if m != nil {
			cost += m.cost
			depth = max(depth, m.depthOf())
		}
	}
	for _, f := range t.Fields {
		add(f.Type)
	}
	add(t.Elem)
	add(t.Err)
	t.cost = cost
	t.depth = depth + 1
	if cost > maxTypeCost {
		return typeLimitError("type too large: more than 65536 nodes when expanded")
	}
	if depth+1 > maxDepth {
		return typeLimitError("type nested deeper than 64 levels")
	}
	return nil
}

func (t *Type) depthOf() int { return t.depth }

// declType reads the declarators of an instance type or (component
// true) a component type, each in a fresh type index space.
func (d *decoder) declType(r *reader, parent *scope, component bool) (*Type, error) {
	depth := 0
	for s := parent; s != nil; s = s.parent {
		depth++
	}
	if depth >= maxNesting {
		return nil, r.errf("type declarators nested deeper than %d", maxNesting)
	}
	sc := &scope{parent: parent}
	t := &Type{Kind: InstanceKind, cost: 1}
	if component {
		t.Kind = ComponentKind
	}
	n, err := r.count()
	if err != nil {
		return nil, err
	}
	for range n {
		k, err := r.byte()
		if err != nil {
			return nil, err
		}
		switch k {
		case 0x00:
			if err := d.coreType(r, sc); err != nil {
				return nil, err
			}
		case 0x01:
			dt, err := d.deftype(r, sc)
			if err != nil {
				return nil, err
			}
			if len(sc.types) >= maxItems {
				return nil, r.errf("more than %d types in a declarator", maxItems)
			}
			sc.types = append(sc.types, dt)
		case 0x02:
			s, err := d.sort(r)
			if err != nil {
				return nil, err
			}
			tgt, err := r.byte()
			if err != nil {
				return nil, err
			}
			if tgt != 0x02 {
				return nil, r.errf("only outer aliases are allowed in type declarators")
			}
			ct, err := r.u32()
			if err != nil {
				return nil, err
			}
			idx, err := r.u32()
			if err != nil {
				return nil, err
			}
			outer := sc
			for range ct {
				if outer = outer.parent; outer == nil {
					return nil, r.errf("outer alias count %d beyond the enclosing scopes", ct)
				}
			}
			switch s {
			case SortType:
				if int64(idx) >= int64(len(outer.types)) {
					return nil, r.errf("outer type index %d out of range", idx)
				}
				sc.types = append(sc.types, outer.types[idx])
			case SortCoreType:
				if int64(idx) >= int64(outer.coreTypes) {
					return nil, r.errf("outer core type index %d out of range", idx)
				}
				sc.coreTypes++
			default:
				return nil, r.errf("outer alias of a %v in a type declarator", s)
			}
		case 0x03, 0x04:
			if k == 0x03 && !component {
				return nil, r.errf("import declarator in an instance type")
			}
			name, err := d.externName(r)
			if err != nil {
				return nil, err
			}
			s, et, err := d.externDesc(r, sc, name)
			if err != nil {
				return nil, err
			}
			if s == SortType {
				sc.types = append(sc.types, et)
			}
			e := Extern{Name: name, Sort: s, Type: et}
			if k == 0x03 {
				t.Imports = append(t.Imports, e)
			} else {
				t.Exports = append(t.Exports, e)
			}
		default:
			return nil, r.errf("unknown type declarator %#x", k)
		}
	}
	return t, nil
}
