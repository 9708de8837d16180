package canon

import (
	"context"
	"errors"
	"fmt"

	"github.com/wasmcp/wasmcp/internal/component"
)

// Memory is a core instance's linear memory, as wazero's api.Memory
// offers it. Read returns the n bytes at off (false when they are out of
// range); the slice is only used until the next call into the guest.
// Write copies b to off (false when out of range).
type Memory interface {
	Size() uint32
	Read(off, n uint32) ([]byte, bool)
	Write(off uint32, b []byte) bool
}

// Realloc is the canonical `realloc` option: the guest's allocator,
// called as realloc(old, oldSize, align, newSize) to get newSize bytes
// aligned to align (old 0 and oldSize 0 for a fresh allocation).
type Realloc func(ctx context.Context, old, oldSize, align, newSize uint32) (uint32, error)

// PostReturn is the canonical `post-return` option: called with the core
// results of an export once they have been lifted, so that the guest may
// free what it allocated for them.
type PostReturn func(ctx context.Context, flat []uint64) error

// DefaultMaxLift is the default of Options.MaxLift.
const DefaultMaxLift = 64 << 20

// Options are the canonical options of one lift or lower, with what the
// runtime supplies for them.
type Options struct {
	// Encoding is the guest's string encoding.
	Encoding component.Encoding
	// Memory is the guest memory strings, lists and spilled values live
	// in; nil when the function has no memory option.
	Memory Memory
	// Realloc allocates in Memory; nil when absent.
	Realloc Realloc
	// PostReturn runs after an export's results are lifted; nil when absent.
	PostReturn PostReturn
	// Table is the guest instance's handle table (needed when the
	// function's types hold own or borrow handles).
	Table *ResourceTable
	// MaxLift bounds the Go memory one lift may allocate, in bytes
	// (approximately; DefaultMaxLift if zero). A guest passing a longer
	// list or string gets a trap.
	MaxLift int64
	// ByteLists makes a list<u8> lift as a []byte rather than a []any
	// of uint64: for host functions moving bytes (wasi:io streams,
	// wasi:filesystem reads and writes). Tool values leave it unset.
	ByteLists bool
}

// Func is a component function type prepared for lifting and lowering:
// the layouts of its parameters and result and its flat signature. It is
// immutable and safe for concurrent use.
type Func struct {
	// Type is the function type.
	Type *component.Type

	params      []*layout
	result      *layout // nil for a function without a result
	tuple       *layout // the parameters as a tuple, when they are spilled
	spillParams bool
	spillResult bool
	nLowered    int // core parameters of the lowered (import) signature
}

// NewFunc prepares function type ft. It fails on a type that is not a
// function of value types, on a result that holds a borrow handle (the
// spec allows borrows in parameters only), and on types past the
// package's size limits.
func NewFunc(ft *component.Type) (*Func, error) {
	if ft == nil || ft.Kind != component.Func {
		return nil, errors.New("canon: not a function type")
	}
	ls := layouts{}
	f := &Func{Type: ft}
	n := 0
	fields := make([]component.Field, len(ft.Params))
	for i, p := range ft.Params {
		l, err := ls.of(p.Type)
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %w", p.Name, err)
		}
		f.params = append(f.params, l)
		n += len(l.flat)
		f.spillParams = f.spillParams || l.over
		fields[i] = component.Field{Type: p.Type}
	}
	if f.spillParams || n > MaxFlatParams {
		f.spillParams = true
		tl, err := ls.of(&component.Type{Kind: component.Tuple, Fields: fields})
		if err != nil {
			return nil, fmt.Errorf("parameters: %w", err)
		}
		f.tuple = tl
	}
	if ft.Result != nil {
		if hasBorrow(ft.Result, 0) {
			return nil, errors.New("canon: a function result holds a borrow handle")
		}
		l, err := ls.of(ft.Result)
		if err != nil {
			return nil, fmt.Errorf("result: %w", err)
		}
		f.result = l
		f.spillResult = l.over || len(l.flat) > MaxFlatResults
	}
	ps, _ := f.CoreType(true)
	f.nLowered = len(ps)
	return f, nil
}

func hasBorrow(t *component.Type, depth int) bool {
	if t == nil || depth > maxDepth {
		return false
	}
	switch t.Kind {
	case component.Borrow:
		return true
	case component.List, component.Option:
		return hasBorrow(t.Elem, depth+1)
	case component.Result:
		return hasBorrow(t.Elem, depth+1) || hasBorrow(t.Err, depth+1)
	case component.Record, component.Tuple, component.Variant:
		for _, f := range t.Fields {
			if hasBorrow(f.Type, depth+1) {
				return true
			}
		}
	}
	return false
}

// CoreType returns the flat core signature of the function: with lower
// false, that of the core function a `canon lift` wraps (spilled results
// come back as one i32 pointer); with lower true, that of the core
// function `canon lower` produces for the guest to import (spilled
// results go to an i32 out-pointer appended to the parameters).
func (f *Func) CoreType(lower bool) (params, results []CoreType) {
	if f.spillParams {
		params = []CoreType{I32}
	} else {
		for _, l := range f.params {
			params = append(params, l.flat...)
		}
	}
	if f.result != nil {
		switch {
		case !f.spillResult:
			results = append(results, f.result.flat...)
		case lower:
			params = append(params, I32)
		default:
			results = []CoreType{I32}
		}
	}
	return params, results
}

// NeedsMemory reports whether calls of the function touch linear memory
// (strings, lists or spilled values), so a memory option is required.
func (f *Func) NeedsMemory() bool {
	if f.spillParams || f.spillResult {
		return true
	}
	for _, l := range f.params {
		if needsMemory(l, 0) {
			return true
		}
	}
	return f.result != nil && needsMemory(f.result, 0)
}

// NeedsRealloc reports whether calls of the function allocate in guest
// memory, so a realloc option is required: to lower the arguments of an
// export (lower false) that hold strings or lists or are spilled, or the
// result of an import (lower true) that holds strings or lists.
func (f *Func) NeedsRealloc(lower bool) bool {
	if lower {
		return f.result != nil && needsMemory(f.result, 0)
	}
	if f.spillParams {
		return true
	}
	for _, l := range f.params {
		if needsMemory(l, 0) {
			return true
		}
	}
	return false
}

func needsMemory(l *layout, depth int) bool {
	if l == nil || depth > maxDepth {
		return false
	}
	switch l.kind {
	case component.String, component.List:
		return true
	}
	for _, m := range l.fields {
		if needsMemory(m, depth+1) {
			return true
		}
	}
	for _, m := range l.cases {
		if needsMemory(m, depth+1) {
			return true
		}
	}
	return false
}

// Call is one invocation of a function, in either direction. It is the
// spec's borrow scope: the borrow handles lowered into the callee, which
// the callee must drop before it returns, and the own handles lent to it,
// which are given back when the call ends. A Call is used once, by one
// goroutine.
type Call struct {
	f       *Func
	o       *Options
	borrows int
	lenders []uint32
	added   []uint32 // handles lowered into the table by this call
	ended   bool
}

// NewCall starts an invocation of f with options o.
func (f *Func) NewCall(o *Options) *Call { return &Call{f: f, o: o} }

// LowerArgs lowers the arguments of a call to an export (canon lift) and
// returns the core arguments for the core function: flat values, or one
// pointer to them in memory allocated with realloc.
func (c *Call) LowerArgs(ctx context.Context, args []any) ([]uint64, error) {
	f := c.f
	if len(args) != len(f.params) {
		return nil, fmt.Errorf("canon: %d arguments, the function takes %d: %w", len(args), len(f.params), ErrValue)
	}
	flat, err := c.lowerArgs(ctx, args)
	if err != nil {
		c.unlower()
	}
	c.added = nil
	return flat, err
}

// unlower removes the handles a failed lowering put in the table: they
// are still the caller's.
func (c *Call) unlower() {
	t := c.o.Table
	for _, i := range c.added {
		if int64(i) < int64(len(t.entries)) && t.entries[i].used {
			if t.entries[i].scope == c {
				c.borrows--
			}
			t.remove(i)
		}
	}
}

func (c *Call) lowerArgs(ctx context.Context, args []any) ([]uint64, error) {
	f := c.f
	w := &lowerer{c: c}
	if f.spillParams {
		ptr, err := w.alloc(ctx, 0, 0, f.tuple.align, uint64(f.tuple.size))
		if err != nil {
			return nil, err
		}
		buf := make([]byte, f.tuple.size)
		for i, l := range f.params {
			if err := w.store(ctx, l, args[i], buf[f.tuple.offs[i]:]); err != nil {
				return nil, fmt.Errorf("argument %d: %w", i, err)
			}
		}
		if err := w.write(ptr, buf); err != nil {
			return nil, err
		}
		return []uint64{uint64(ptr)}, nil
	}
	var flat []uint64
	for i, l := range f.params {
		var err error
		if flat, err = w.flat(ctx, l, args[i], flat); err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
	}
	return flat, nil
}

// LiftResults lifts the core results of a call to an export into the
// function's result (nil for a function without one), checks that the
// callee dropped every borrow it was given, and then runs post-return.
// A failed lift does not run post-return: the instance has trapped.
func (c *Call) LiftResults(ctx context.Context, flat []uint64) (any, error) {
	f := c.f
	var v any
	if f.result != nil {
		r := c.lifter()
		var err error
		if f.spillResult {
			if len(flat) != 1 {
				return nil, fmt.Errorf("canon: %d core results, want 1", len(flat))
			}
			v, err = r.loadAt(f.result, flat[0])
		} else {
			if len(flat) != len(f.result.flat) {
				return nil, fmt.Errorf("canon: %d core results, want %d", len(flat), len(f.result.flat))
			}
			v, err = r.flat(f.result, flat)
		}
		if err != nil {
			return nil, fmt.Errorf("result: %w", err)
		}
	} else if len(flat) != 0 {
		return nil, fmt.Errorf("canon: %d core results, want none", len(flat))
	}
	if c.borrows != 0 {
		return nil, trapf("the callee returned without dropping %d borrowed handles", c.borrows)
	}
	c.ended = true
	if c.o.PostReturn != nil {
		if err := c.o.PostReturn(ctx, flat); err != nil {
			return nil, fmt.Errorf("post-return: %w", err)
		}
	}
	return v, nil
}

// LiftArgs lifts the core arguments of a call to an import (canon lower)
// that the host implements. Borrowed own handles stay lent until End.
func (c *Call) LiftArgs(ctx context.Context, flat []uint64) ([]any, error) {
	f := c.f
	if len(flat) != f.nLowered {
		return nil, fmt.Errorf("canon: %d core arguments, want %d", len(flat), f.nLowered)
	}
	r := c.lifter()
	if f.spillParams {
		v, err := r.loadAt(f.tuple, flat[0])
		if err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		return v.([]any), nil
	}
	args := make([]any, len(f.params))
	for i, l := range f.params {
		n := len(l.flat)
		v, err := r.flat(l, flat[:n])
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
		args[i] = v
		flat = flat[n:]
	}
	return args, nil
}

// LowerResults lowers the result of a host-implemented import, given the
// core arguments of the call (whose last one is the out-pointer when the
// result is passed in memory), and returns the core results. It ends the
// call.
func (c *Call) LowerResults(ctx context.Context, v any, flatArgs []uint64) ([]uint64, error) {
	defer c.End()
	f := c.f
	if f.result == nil {
		return nil, nil
	}
	w := &lowerer{c: c}
	if !f.spillResult {
		return w.flat(ctx, f.result, v, nil)
	}
	if len(flatArgs) == 0 {
		return nil, errors.New("canon: no out-pointer argument")
	}
	out := flatArgs[len(flatArgs)-1]
	l := f.result
	ptr := uint32(out)
	if ptr%l.align != 0 {
		return nil, trapf("result pointer %#x not aligned to %d", ptr, l.align)
	}
	if err := w.check(ptr, uint64(l.size)); err != nil {
		return nil, err
	}
	buf := make([]byte, l.size)
	if err := w.store(ctx, l, v, buf); err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	return nil, w.write(ptr, buf)
}

// End ends a call to a host-implemented import: the own handles lent to
// it are given back. It is idempotent, and LowerResults calls it.
func (c *Call) End() {
	if c.ended {
		return
	}
	c.ended = true
	if t := c.o.Table; t != nil {
		for _, i := range c.lenders {
			if int64(i) < int64(len(t.entries)) && t.entries[i].used && t.entries[i].lends > 0 {
				t.entries[i].lends--
			}
		}
	}
	c.lenders = nil
}

func (c *Call) lifter() *lifter {
	budget := c.o.MaxLift
	if budget <= 0 {
		budget = DefaultMaxLift
	}
	return &lifter{c: c, budget: budget}
}
