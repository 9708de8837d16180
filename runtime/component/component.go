// Package component runs a decoded WebAssembly component on wazero: it
// compiles the component's core modules, instantiates them in the order
// the component gives with their imports linked as the component says
// (to exports of earlier core instances, directly or through inline
// export bags and aliases, and to the host), implements `canon lower`ed
// imports and the resource built-ins as host functions, and calls the
// `canon lift`ed exports from Go, with the canonical ABI of package
// internal/component/canon in between.
//
// wazero links an import by module name only, so each core module's
// import section is rewritten before it is compiled: an import (m, f) is
// renamed to the core instance or host function it resolves to ("i3",
// "memory"; "h", "f12"), and an experimental.ImportResolver maps those
// names to the instance's modules, which are all anonymous, so that one
// wazero runtime can hold many instances of one component.
//
// Nested components are supported only in the form wit-component gives
// exported interfaces: an instance of a component that re-exports the
// functions it is instantiated with. The spec's reentrancy rules hold: an
// export called from inside a call of the same instance, or an import
// called (from realloc) while values are lowered into the guest, is a
// trap. Not supported yet: nested components with code of their own, and
// lowering a lifted function (a component calling its own export).
package component

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	cm "github.com/wasmcp/wasmcp/internal/component"
	"github.com/wasmcp/wasmcp/internal/component/canon"
)

// Func implements an imported function in Go: it gets the arguments and
// returns the result (nil for a function without one) as canon's Go
// values. An error is a trap: it fails the guest's call.
type Func func(ctx context.Context, args []any) (any, error)

// Host implements a component's imports.
type Host struct {
	// Funcs maps an imported function to its implementation: by its
	// name for a function the world imports, by "INSTANCE#NAME" for a
	// function of an imported instance ("wasi:cli/stdout@0.2.3#get-stdout").
	// A key without the instance's version ("wasi:cli/stdout#get-stdout")
	// implements the function for every version the exact name does not.
	Funcs map[string]Func
	// Drop, if set, is called when the guest drops its own handle of a
	// resource the host implements (an imported resource type).
	Drop func(ctx context.Context, rt *cm.ResourceType, rep uint32) error
	// ByteLists makes list<u8> arguments reach Funcs as []byte (see
	// canon.Options.ByteLists).
	ByteLists bool
	// MaxLift bounds what one lift may allocate (see canon.Options.MaxLift).
	MaxLift int64
	// Prepare, if set, is given each core module (its imports already
	// renamed) before it is compiled, and returns what to compile: the
	// runtime instruments modules there for deadlines. Imports it adds
	// resolve in the wazero runtime by module name, as usual. It is
	// called once per core instance that instantiates a module, in the
	// component's order.
	Prepare func(core []byte) ([]byte, error)
	// Compile, if set, compiles what Prepare returned in place of the
	// wazero runtime's CompileModule: the runtime compiles through its
	// authenticated on-disk cache there. It must compile on the runtime
	// given to Compile.
	Compile func(ctx context.Context, core []byte) (wazero.CompiledModule, error)
	// Instantiated, if set, is called with each core instance right
	// after it is instantiated and before the next one is, in the order
	// Prepare saw their modules, under the ctx given to Instantiate: the
	// runtime runs the start function its instrumentation moved out and
	// arms interruption there. An error fails the instantiation.
	Instantiated func(ctx context.Context, mod api.Module) error
}

// lookup returns the implementation of import name: its exact name's,
// else that of its name without the instance's version.
func (h *Host) lookup(name string) Func {
	if f := h.Funcs[name]; f != nil {
		return f
	}
	inst, fn, ok := strings.Cut(name, "#")
	if at := strings.LastIndexByte(inst, '@'); ok && at > 0 {
		return h.Funcs[inst[:at]+"#"+fn]
	}
	return nil
}

// target is where an import resolves: export name of core instance inst,
// or host function name of the instance's host module (inst -1).
type target struct {
	inst int
	name string
}

// resolverName is the module name an import resolving to t is renamed to.
func (t target) resolverName() string {
	if t.inst < 0 {
		return "h"
	}
	return "i" + strconv.Itoa(t.inst)
}

// Compiled is a component compiled on one wazero runtime: its core
// modules (with their imports renamed), its exports and the host
// functions its instances need. Instantiate it once per instance.
type Compiled struct {
	c       *cm.Component
	rt      wazero.Runtime
	host    *Host
	modules []wazero.CompiledModule // by core instance index; nil for export bags
	lowers  []int                   // core funcs the host module must define
	exports map[string]*export
	names   []string // export names, in binary order
}

// export is a lifted function the component exports.
type export struct {
	name              string
	fn                *canon.Func
	core              target
	opts              optRefs
	nparams, nresults int
}

// optRefs are the canonical options of a lift or lower, resolved to
// their targets.
type optRefs struct {
	enc                      cm.Encoding
	memory, realloc, postRet *target
}

// Compile compiles component c's core modules on rt and checks that host
// implements every function the core modules import.
func Compile(ctx context.Context, rt wazero.Runtime, c *cm.Component, host *Host) (*Compiled, error) {
	if host == nil {
		host = &Host{}
	}
	cc := &Compiled{c: c, rt: rt, host: host, modules: make([]wazero.CompiledModule, len(c.CoreInstances)), exports: map[string]*export{}}
	lowered := map[int]bool{}
	for i, ci := range c.CoreInstances {
		if ci.Module < 0 {
			continue
		}
		if ci.Module >= len(c.Modules) {
			cc.Close(ctx)
			return nil, fmt.Errorf("core instance %d: module %d out of range", i, ci.Module)
		}
		bin, _, err := rewriteImports(c.Modules[ci.Module], func(imp coreImport) (string, string, error) {
			t, err := cc.resolveImport(ci, imp)
			if err != nil {
				return "", "", fmt.Errorf("import %q %q: %w", imp.Module, imp.Field, err)
			}
			if t.inst < 0 {
				k, _ := strconv.Atoi(t.name[1:])
				lowered[k] = true
			}
			return t.resolverName(), t.name, nil
		})
		if err != nil {
			cc.Close(ctx)
			return nil, fmt.Errorf("core instance %d (module %d): %w", i, ci.Module, err)
		}
		if host.Prepare != nil {
			if bin, err = host.Prepare(bin); err != nil {
				cc.Close(ctx)
				return nil, fmt.Errorf("core instance %d (module %d): %w", i, ci.Module, err)
			}
		}
		var m wazero.CompiledModule
		if host.Compile != nil {
			m, err = host.Compile(ctx, bin)
		} else {
			m, err = rt.CompileModule(ctx, bin)
		}
		if err != nil {
			cc.Close(ctx)
			return nil, fmt.Errorf("core instance %d (module %d): %w", i, ci.Module, err)
		}
		cc.modules[i] = m
	}
	for k := range c.CoreFuncs {
		if lowered[k] {
			if err := cc.checkHostFunc(k); err != nil {
				cc.Close(ctx)
				return nil, err
			}
			cc.lowers = append(cc.lowers, k)
		}
	}
	if err := cc.collectExports(); err != nil {
		cc.Close(ctx)
		return nil, err
	}
	return cc, nil
}

// Close releases the compiled modules.
func (cc *Compiled) Close(ctx context.Context) error {
	var errs []error
	for _, m := range cc.modules {
		if m != nil {
			errs = append(errs, m.Close(ctx))
		}
	}
	return errors.Join(errs...)
}

// Exports returns the names of the functions Call can call, in the
// component's order: "NAME" for a function exported by the world,
// "INSTANCE#NAME" for a function of an exported instance.
func (cc *Compiled) Exports() []string { return append([]string(nil), cc.names...) }

// Type returns the function type of export name, or nil.
func (cc *Compiled) Type(name string) *cm.Type {
	if e := cc.exports[name]; e != nil {
		return e.fn.Type
	}
	return nil
}

func importSort(kind byte) (cm.Sort, error) {
	switch kind {
	case importFunc:
		return cm.SortCoreFunc, nil
	case importTable:
		return cm.SortCoreTable, nil
	case importMemory:
		return cm.SortCoreMemory, nil
	case importGlobal:
		return cm.SortCoreGlobal, nil
	}
	return 0, fmt.Errorf("imports of kind %#x are not supported", kind)
}

// resolveImport resolves import imp of a core instantiation.
func (cc *Compiled) resolveImport(ci cm.CoreInstance, imp coreImport) (target, error) {
	sort, err := importSort(imp.Kind)
	if err != nil {
		return target{}, err
	}
	for _, a := range ci.Args {
		if a.Name == imp.Module {
			return cc.resolveExport(sort, a.Instance, imp.Field, 0)
		}
	}
	return target{}, fmt.Errorf("no instance is given for module %q", imp.Module)
}

// resolveExport resolves export name of sort sort of core instance inst,
// following inline export bags and aliases to a real instance or to the
// host.
func (cc *Compiled) resolveExport(sort cm.Sort, inst int, name string, depth int) (target, error) {
	c := cc.c
	if depth > len(c.CoreInstances)+len(c.CoreFuncs)+8 {
		return target{}, errors.New("alias chain too long")
	}
	if inst < 0 || inst >= len(c.CoreInstances) {
		return target{}, fmt.Errorf("core instance %d out of range", inst)
	}
	ci := c.CoreInstances[inst]
	if ci.Module >= 0 {
		return target{inst: inst, name: name}, nil
	}
	for _, e := range ci.Exports {
		if e.Name != name {
			continue
		}
		if e.Sort != sort {
			return target{}, fmt.Errorf("core instance %d exports %q as a %s, not a %s", inst, name, e.Sort, sort)
		}
		return cc.resolveIndex(sort, e.Index, depth+1)
	}
	return target{}, fmt.Errorf("core instance %d has no export %q", inst, name)
}

// resolveIndex resolves definition idx of a core index space.
func (cc *Compiled) resolveIndex(sort cm.Sort, idx, depth int) (target, error) {
	c := cc.c
	var refs []cm.CoreExportRef
	switch sort {
	case cm.SortCoreFunc:
		if idx < 0 || idx >= len(c.CoreFuncs) {
			return target{}, fmt.Errorf("core func %d out of range", idx)
		}
		cf := c.CoreFuncs[idx]
		if cf.Kind != cm.CoreFuncAlias {
			return target{inst: -1, name: "f" + strconv.Itoa(idx)}, nil
		}
		return cc.resolveExport(sort, cf.Alias.Instance, cf.Alias.Name, depth+1)
	case cm.SortCoreMemory:
		refs = c.CoreMemories
	case cm.SortCoreTable:
		refs = c.CoreTables
	case cm.SortCoreGlobal:
		refs = c.CoreGlobals
	default:
		return target{}, fmt.Errorf("a %s cannot be imported", sort)
	}
	if idx < 0 || idx >= len(refs) {
		return target{}, fmt.Errorf("%s %d out of range", sort, idx)
	}
	return cc.resolveExport(sort, refs[idx].Instance, refs[idx].Name, depth+1)
}

// optRefs resolves canonical options.
func (cc *Compiled) optRefs(o cm.Options) (optRefs, error) {
	r := optRefs{enc: o.Encoding}
	if o.Memory >= 0 {
		t, err := cc.resolveIndex(cm.SortCoreMemory, o.Memory, 0)
		if err != nil {
			return r, fmt.Errorf("memory option: %w", err)
		}
		r.memory = &t
	}
	for _, f := range []struct {
		idx int
		dst **target
		opt string
	}{{o.Realloc, &r.realloc, "realloc"}, {o.PostReturn, &r.postRet, "post-return"}} {
		if f.idx < 0 {
			continue
		}
		t, err := cc.resolveIndex(cm.SortCoreFunc, f.idx, 0)
		if err != nil {
			return r, fmt.Errorf("%s option: %w", f.opt, err)
		}
		if t.inst < 0 {
			return r, fmt.Errorf("%s option: a host function", f.opt)
		}
		*f.dst = &t
	}
	return r, nil
}

// importName names the component import a lowered function is.
func (cc *Compiled) importName(def cm.FuncDef) (string, error) {
	c := cc.c
	switch def.Kind {
	case cm.FuncImport:
		if def.Import >= 0 && def.Import < len(c.Imports) {
			return c.Imports[def.Import].Name, nil
		}
	case cm.FuncAlias:
		if def.Instance >= 0 && def.Instance < len(c.Instances) {
			in := c.Instances[def.Instance]
			if in.Kind == cm.InstanceImport && in.Import >= 0 && in.Import < len(c.Imports) {
				return c.Imports[in.Import].Name + "#" + def.Name, nil
			}
			return "", errors.New("lowering a function of a nested component is not supported")
		}
	case cm.FuncLift:
		return "", errors.New("lowering a lifted function is not supported")
	}
	return "", errors.New("bad function definition")
}

// checkHostFunc checks that core func k, which a core module imports, is
// one the host module can define.
func (cc *Compiled) checkHostFunc(k int) error {
	cf := cc.c.CoreFuncs[k]
	switch cf.Kind {
	case cm.CoreFuncLower:
		def := cc.c.Funcs[cf.Func]
		name, err := cc.importName(def)
		if err != nil {
			return fmt.Errorf("core func %d: %w", k, err)
		}
		if cc.host.lookup(name) == nil {
			return fmt.Errorf("import %q is not implemented by the host", name)
		}
		fn, err := canon.NewFunc(def.Type)
		if err != nil {
			return fmt.Errorf("import %q: %w", name, err)
		}
		if fn.NeedsMemory() && cf.Opts.Memory < 0 {
			return fmt.Errorf("import %q: lowered without the memory option it needs", name)
		}
		if fn.NeedsRealloc(true) && cf.Opts.Realloc < 0 {
			return fmt.Errorf("import %q: lowered without the realloc option it needs", name)
		}
		if _, err := cc.optRefs(cf.Opts); err != nil {
			return fmt.Errorf("import %q: %w", name, err)
		}
	case cm.CoreFuncResourceNew, cm.CoreFuncResourceDrop, cm.CoreFuncResourceRep:
		if cf.Resource == nil {
			return fmt.Errorf("core func %d: resource built-in without a resource", k)
		}
	default:
		return fmt.Errorf("core func %d: not a host function", k)
	}
	return nil
}

// collectExports finds the lifted functions the component exports, at
// world level and in exported instances.
func (cc *Compiled) collectExports() error {
	c := cc.c
	add := func(name string, idx int) error {
		if idx < 0 || idx >= len(c.Funcs) {
			return fmt.Errorf("export %q: function %d out of range", name, idx)
		}
		def := c.Funcs[idx]
		if def.Kind != cm.FuncLift {
			return nil // a re-exported import or a nested component's function
		}
		fn, err := canon.NewFunc(def.Type)
		if err != nil {
			return fmt.Errorf("export %q: %w", name, err)
		}
		core, err := cc.resolveIndex(cm.SortCoreFunc, def.CoreFunc, 0)
		if err != nil {
			return fmt.Errorf("export %q: %w", name, err)
		}
		if core.inst < 0 {
			return fmt.Errorf("export %q: lifting a host function is not supported", name)
		}
		refs, err := cc.optRefs(def.Opts)
		if err != nil {
			return fmt.Errorf("export %q: %w", name, err)
		}
		if fn.NeedsMemory() && refs.memory == nil {
			return fmt.Errorf("export %q: lifted without the memory option it needs", name)
		}
		if fn.NeedsRealloc(false) && refs.realloc == nil {
			return fmt.Errorf("export %q: lifted without the realloc option it needs", name)
		}
		params, results := fn.CoreType(false)
		cc.exports[name] = &export{name: name, fn: fn, core: core, opts: refs, nparams: len(params), nresults: len(results)}
		cc.names = append(cc.names, name)
		return nil
	}
	for _, e := range c.Exports {
		switch e.Sort {
		case cm.SortFunc:
			if err := add(e.Name, e.Index); err != nil {
				return err
			}
		case cm.SortInstance:
			if e.Index < 0 || e.Index >= len(c.Instances) {
				return fmt.Errorf("export %q: instance %d out of range", e.Name, e.Index)
			}
			for _, f := range cc.instanceFuncs(c.Instances[e.Index]) {
				if err := add(e.Name+"#"+f.Name, f.Index); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// instanceFuncs returns the functions a component instance exports, as
// indices into the component's function space: those of an inline
// instance, and those of an instance of a nested component that only
// re-exports its imports, which is how wit-component wraps an exported
// interface to give its types their names.
func (cc *Compiled) instanceFuncs(in cm.Instance) []cm.Arg {
	var out []cm.Arg
	switch in.Kind {
	case cm.InstanceExports:
		for _, a := range in.Args {
			if a.Sort == cm.SortFunc {
				out = append(out, a)
			}
		}
	case cm.InstanceInstantiate:
		if in.Component < 0 || in.Component >= len(cc.c.Components) {
			return nil
		}
		nc := cc.c.Components[in.Component]
		for _, e := range nc.Exports {
			if e.Sort != cm.SortFunc || e.Index < 0 || e.Index >= len(nc.Funcs) {
				continue
			}
			def := nc.Funcs[e.Index]
			if def.Kind != cm.FuncImport || def.Import < 0 || def.Import >= len(nc.Imports) {
				continue // the nested component defines it: not supported
			}
			for _, a := range in.Args {
				if a.Sort == cm.SortFunc && a.Name == nc.Imports[def.Import].Name {
					out = append(out, cm.Arg{Name: e.Name, Sort: cm.SortFunc, Index: a.Index})
				}
			}
		}
	}
	return out
}

// coreTypes converts a flat signature to wazero's value types (the same
// encodings).
func coreTypes(ts []canon.CoreType) []api.ValueType {
	out := make([]api.ValueType, len(ts))
	for i, t := range ts {
		out[i] = api.ValueType(t)
	}
	return out
}
