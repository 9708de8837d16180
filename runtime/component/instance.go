package component

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	cm "github.com/wasmcp/wasmcp/internal/component"
	"github.com/wasmcp/wasmcp/internal/component/canon"
)

// ErrTrapped is returned by calls of an instance that trapped before: the
// spec leaves such an instance unusable, so it must be replaced.
var ErrTrapped = errors.New("component instance trapped earlier; it must be replaced")

// Instance is one instance of a compiled component. It runs one call at
// a time (like a core instance); use one per goroutine.
type Instance struct {
	cc      *Compiled
	mods    []api.Module // by core instance index
	host    api.Module
	table   *canon.ResourceTable
	opts    map[*optRefs]*canon.Options
	funcs   map[target]api.Function  // wazero makes a new call engine per ExportedFunction
	lifted  map[*export]api.Function // exports' core functions, their types checked
	trapped bool
	// entered is set during a call of an export (the spec's may_enter
	// cleared), lowering while values are lowered into the guest (its
	// may_leave cleared): the guest may not call an import then.
	entered, lowering bool
}

// Instantiate creates an instance: the host module, then every core
// instance in the component's order, each linked to what its imports
// resolve to. Core start functions run (only those: no "_start"). ctx
// reaches wazero's instantiation, so its context options (a memory
// allocator, listeners) apply to every core instance.
func (cc *Compiled) Instantiate(ctx context.Context) (*Instance, error) {
	in := &Instance{cc: cc, mods: make([]api.Module, len(cc.c.CoreInstances)), opts: map[*optRefs]*canon.Options{}, funcs: map[target]api.Function{}, lifted: map[*export]api.Function{}}
	in.table = &canon.ResourceTable{OnDrop: in.onDrop}
	if err := in.buildHost(ctx); err != nil {
		return nil, err
	}
	rctx := experimental.WithImportResolver(ctx, func(name string) api.Module {
		if name == "h" {
			return in.host
		}
		if len(name) > 1 && name[0] == 'i' {
			if j, err := strconv.Atoi(name[1:]); err == nil && j >= 0 && j < len(in.mods) {
				return in.mods[j]
			}
		}
		return nil
	})
	for i, m := range cc.modules {
		if m == nil {
			continue
		}
		mod, err := cc.rt.InstantiateModule(rctx, m, wazero.NewModuleConfig().WithName("").WithStartFunctions())
		if err != nil {
			in.Close(ctx)
			return nil, fmt.Errorf("instantiating core instance %d: %w", i, err)
		}
		in.mods[i] = mod
		if cc.host.Instantiated != nil {
			if err := cc.host.Instantiated(ctx, mod); err != nil {
				in.Close(ctx)
				return nil, fmt.Errorf("core instance %d: %w", i, err)
			}
		}
	}
	return in, nil
}

// Close closes the instance's modules, the last instantiated first.
func (in *Instance) Close(ctx context.Context) error {
	var errs []error
	for i := len(in.mods) - 1; i >= 0; i-- {
		if in.mods[i] != nil {
			errs = append(errs, in.mods[i].Close(ctx))
			in.mods[i] = nil
		}
	}
	if in.host != nil {
		errs = append(errs, in.host.Close(ctx))
		in.host = nil
	}
	return errors.Join(errs...)
}

// Trapped reports whether the instance trapped: its calls fail with
// ErrTrapped from then on.
func (in *Instance) Trapped() bool { return in.trapped }

// Table returns the instance's resource handle table.
func (in *Instance) Table() *canon.ResourceTable { return in.table }

// Call calls export name (see Compiled.Exports) with args as canon's Go
// values and returns its result (nil for a function without one). A trap
// (in the guest, or a canonical ABI check) leaves the instance unusable.
func (in *Instance) Call(ctx context.Context, name string, args ...any) (any, error) {
	e := in.cc.exports[name]
	if e == nil {
		return nil, fmt.Errorf("component has no exported function %q", name)
	}
	if in.trapped {
		return nil, ErrTrapped
	}
	if in.entered {
		in.trapped = true
		return nil, canon.ErrTrap // spec: trap_if(not may_enter)
	}
	in.entered = true
	defer func() { in.entered = false }()
	o, err := in.options(&e.opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	fn, err := in.liftedCore(e)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := e.fn.NewCall(o)
	in.lowering = true
	flat, err := c.LowerArgs(ctx, args)
	in.lowering = false
	if err != nil {
		// A value that does not fit is the caller's mistake; anything
		// else (a realloc that trapped or misbehaved) is the guest's.
		in.trapped = in.trapped || !errors.Is(err, canon.ErrValue)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	stack := make([]uint64, max(e.nparams, e.nresults))
	copy(stack, flat)
	err = fn.CallWithStack(ctx, stack)
	res := stack[:e.nresults]
	if err != nil {
		in.trapped = true
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	v, err := c.LiftResults(ctx, res)
	if err != nil {
		in.trapped = true
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

// liftedCore returns the core function export e lifts, checking once
// that its type is e's flattening.
func (in *Instance) liftedCore(e *export) (api.Function, error) {
	if fn := in.lifted[e]; fn != nil {
		return fn, nil
	}
	fn, err := in.function(e.core)
	if err != nil {
		return nil, err
	}
	params, results := e.fn.CoreType(false)
	if !hasType(fn, coreTypes(params), coreTypes(results)) {
		return nil, fmt.Errorf("the core function's type is not the flattening of %s", e.fn.Type)
	}
	in.lifted[e] = fn
	return fn, nil
}

// hasType reports whether core function f has the given signature.
func hasType(f api.Function, params, results []api.ValueType) bool {
	d := f.Definition()
	return slices.Equal(d.ParamTypes(), params) && slices.Equal(d.ResultTypes(), results)
}

// module returns the core instance t is an export of.
func (in *Instance) module(t target) (api.Module, error) {
	if t.inst < 0 || t.inst >= len(in.mods) || in.mods[t.inst] == nil {
		return nil, fmt.Errorf("core instance %d is not instantiated", t.inst)
	}
	return in.mods[t.inst], nil
}

// function returns the core function t names.
func (in *Instance) function(t target) (api.Function, error) {
	if f := in.funcs[t]; f != nil {
		return f, nil
	}
	m, err := in.module(t)
	if err != nil {
		return nil, err
	}
	if f := m.ExportedFunction(t.name); f != nil {
		in.funcs[t] = f
		return f, nil
	}
	return nil, fmt.Errorf("core instance %d exports no function %q", t.inst, t.name)
}

// memory returns the memory t names.
func (in *Instance) memory(t target) (api.Memory, error) {
	m, err := in.module(t)
	if err != nil {
		return nil, err
	}
	if mem := m.ExportedMemory(t.name); mem != nil {
		return mem, nil
	}
	return nil, fmt.Errorf("core instance %d exports no memory %q", t.inst, t.name)
}

// options returns the canon options for r, resolved against the
// instance's modules once they exist.
func (in *Instance) options(r *optRefs) (*canon.Options, error) {
	if o := in.opts[r]; o != nil {
		return o, nil
	}
	o := &canon.Options{Encoding: r.enc, Table: in.table, MaxLift: in.cc.host.MaxLift}
	if r.memory != nil {
		m, err := in.memory(*r.memory)
		if err != nil {
			return nil, fmt.Errorf("memory option: %w", err)
		}
		o.Memory = m
	}
	if r.realloc != nil {
		f, err := in.function(*r.realloc)
		if err != nil {
			return nil, fmt.Errorf("realloc option: %w", err)
		}
		if !hasType(f, []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}) {
			return nil, errors.New("realloc option: not a func(i32, i32, i32, i32) -> i32")
		}
		stack := make([]uint64, 4) // an instance runs one call at a time
		o.Realloc = func(ctx context.Context, old, oldSize, align, newSize uint32) (uint32, error) {
			stack[0], stack[1], stack[2], stack[3] = uint64(old), uint64(oldSize), uint64(align), uint64(newSize)
			if err := f.CallWithStack(ctx, stack); err != nil {
				return 0, err
			}
			return uint32(stack[0]), nil
		}
	}
	if r.postRet != nil {
		f, err := in.function(*r.postRet)
		if err != nil {
			return nil, fmt.Errorf("post-return option: %w", err)
		}
		o.PostReturn = func(ctx context.Context, flat []uint64) error {
			_, err := f.Call(ctx, flat...)
			return err
		}
	}
	in.opts[r] = o
	return o, nil
}

// onDrop runs the destructor of a resource whose own handle the guest
// dropped: the host's for an imported resource, the component's for one
// it defines with a destructor.
func (in *Instance) onDrop(ctx context.Context, rt *cm.ResourceType, rep uint32) error {
	if rt.Imported {
		if in.cc.host.Drop != nil {
			return in.cc.host.Drop(ctx, rt, rep)
		}
		return nil
	}
	if rt.Dtor < 0 {
		return nil
	}
	t, err := in.cc.resolveIndex(cm.SortCoreFunc, int(rt.Dtor), 0)
	if err != nil {
		return err
	}
	f, err := in.function(t)
	if err != nil {
		return err
	}
	_, err = f.Call(ctx, uint64(rep))
	return err
}

// buildHost instantiates the host module: one function per lowered
// import and resource built-in a core module imports, named "f<index>".
func (in *Instance) buildHost(ctx context.Context) error {
	cc := in.cc
	b := cc.rt.NewHostModuleBuilder("wasmcp:component")
	i32 := []api.ValueType{api.ValueTypeI32}
	for _, k := range cc.lowers {
		cf := cc.c.CoreFuncs[k]
		name := "f" + strconv.Itoa(k)
		switch cf.Kind {
		case cm.CoreFuncLower:
			fn, params, results, err := in.lowered(cf)
			if err != nil {
				return err
			}
			b.NewFunctionBuilder().WithGoModuleFunction(fn, params, results).Export(name)
		case cm.CoreFuncResourceNew:
			rt := cf.Resource
			b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
				h, err := in.table.New(rt, uint32(stack[0]))
				in.check(err)
				stack[0] = uint64(h)
			}), i32, i32).Export(name)
		case cm.CoreFuncResourceRep:
			rt := cf.Resource
			b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
				rep, err := in.table.Rep(rt, uint32(stack[0]))
				in.check(err)
				stack[0] = uint64(rep)
			}), i32, i32).Export(name)
		case cm.CoreFuncResourceDrop:
			rt := cf.Resource
			b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
				in.check(in.table.Drop(ctx, rt, uint32(stack[0])))
			}), i32, nil).Export(name)
		}
	}
	compiled, err := b.Compile(ctx)
	if err != nil {
		return fmt.Errorf("host functions: %w", err)
	}
	in.host, err = cc.rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		return fmt.Errorf("host functions: %w", err)
	}
	return nil
}

// check traps the guest's call (wazero turns a host function's panic into
// the call's error) and marks the instance trapped.
func (in *Instance) check(err error) {
	if err != nil {
		in.trapped = true
		panic(err)
	}
}

// lowered builds the host function of a `canon lower`ed import.
func (in *Instance) lowered(cf cm.CoreFunc) (api.GoModuleFunction, []api.ValueType, []api.ValueType, error) {
	cc := in.cc
	def := cc.c.Funcs[cf.Func]
	name, err := cc.importName(def)
	if err != nil {
		return nil, nil, nil, err
	}
	impl := cc.host.lookup(name)
	fn, err := canon.NewFunc(def.Type)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("import %q: %w", name, err)
	}
	refs, err := cc.optRefs(cf.Opts)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("import %q: %w", name, err)
	}
	params, results := fn.CoreType(true)
	np := len(params)
	byteLists := cc.host.ByteLists
	g := api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
		if in.lowering {
			in.check(fmt.Errorf("%s called while values are lowered into the guest: %w", name, canon.ErrTrap))
		}
		o, err := in.options(&refs)
		in.check(err)
		if byteLists {
			bo := *o
			bo.ByteLists = true
			o = &bo
		}
		c := fn.NewCall(o)
		defer c.End()
		args, err := c.LiftArgs(ctx, stack[:np])
		in.check(wrap(name, err))
		res, err := impl(ctx, args)
		in.check(wrap(name, err))
		in.lowering = true
		flat, err := c.LowerResults(ctx, res, stack[:np])
		in.lowering = false
		in.check(wrap(name, err))
		copy(stack, flat)
	})
	return g, coreTypes(params), coreTypes(results), nil
}

func wrap(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", name, err)
}
