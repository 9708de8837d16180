package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/wasmcp/wasmcp/internal/abi"
	rcomp "github.com/wasmcp/wasmcp/runtime/component"
	"github.com/wasmcp/wasmcp/runtime/internal/instrument"
)

// Module is a compiled, validated plugin. It is safe for concurrent use;
// keep it for the plugin's lifetime and create pools from it.
type Module struct {
	e       *Engine
	name    string
	mode    Mode
	rt      wazero.Runtime // e.rt, or e.safe for a module not instrumented
	cm      wazero.CompiledModule
	starts  []string // instrumented: the start functions the pool runs itself
	imports []Import
	exports []string
	size    int
	minMem  uint64        // declared minimum of the memory, bytes
	maxMem  int64         // declared maximum removed by instrument, bytes; -1 for none
	init    string        // start function run once per instance ("" for none)
	compile time.Duration // how long Compile took (instrumentation included)
	cached  bool          // the compilation cache held the module's code (see Engine.noteCompiled)

	extismExports []string // Mode Extism: the exports CallExport may run

	comp  *rcomp.Compiled // Mode Component: the compiled component (cm is nil)
	cores []coreInfo      // Mode Component: its core modules, as instrumented

	mu     sync.Mutex
	pools  map[*Pool]struct{}
	closed bool
}

// ImportError is returned by Engine.Compile for a module importing
// something the host does not provide (ABI §2).
type ImportError struct {
	// Unknown lists imports outside the wasmcp functions and
	// wasi_snapshot_preview1 (sock_* included), and any memory, table or
	// global import.
	Unknown []Import
	// Mismatched lists wasmcp or WASI functions imported with the wrong
	// signature; Signatures holds "got …, want …" for each.
	Mismatched []Import
	Signatures []string
}

// Error names every refused import.
func (e *ImportError) Error() string {
	var b strings.Builder
	if len(e.Unknown) > 0 {
		b.WriteString("module imports what the host does not provide: ")
		for i, im := range e.Unknown {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(im.Module + "." + im.Name)
		}
	}
	for i, im := range e.Mismatched {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "import %s.%s has the wrong signature (%s)", im.Module, im.Name, e.Signatures[i])
	}
	return b.String()
}

var (
	i32    = api.ValueTypeI32
	wasmcp = map[string][2][]api.ValueType{
		abi.FuncInputLen:    {nil, {i32}},
		abi.FuncInputRead:   {{i32, i32}, {i32}},
		abi.FuncOutputWrite: {{i32, i32}, nil},
		abi.FuncLog:         {{i32, i32, i32}, nil},
		abi.FuncCall:        {{i32, i32, i32, i32}, {i32}},
		abi.FuncResultRead:  {{i32, i32}, {i32}},
	}
)

// Compile instruments wasm for interruption (see Engine; a module that
// cannot be instrumented falls back to wazero's WithCloseOnContextDone),
// compiles it (through the compilation cache, with one worker per CPU),
// checks its imports against ABI §2 (only the six wasmcp functions with
// their signatures and wasi_snapshot_preview1 functions other than sock_*;
// anything else is an *ImportError naming each), requires an exported
// memory and an entry point, and detects the Mode: Reactor if wasmcp_call is
// exported, else Command if _start is. name is used in messages only.
// Compile once at load; the Module is cheap to keep.
func (e *Engine) Compile(ctx context.Context, name string, wasm []byte) (*Module, error) {
	if e.closed.Load() {
		return nil, &Error{Kind: KindClosed, Message: "engine is closed"}
	}
	m := &Module{e: e, name: name, size: len(wasm), pools: map[*Pool]struct{}{}}
	var err error
	began := time.Now()
	m.rt, m.cm, m.maxMem, err = e.compileWithin(ctx, name, wasm, &m.cached)
	m.compile = time.Since(began)
	if err != nil {
		var re *Error
		if errors.As(err, &re) && re.Kind == KindClosed {
			return nil, re
		}
		return nil, fmt.Errorf("compile plugin %q: %w", name, &Error{Kind: KindBadModule, Message: "invalid wasm module: " + err.Error(), Detail: err.Error(), Err: err})
	}
	cm := m.cm
	if err := m.validate(); err != nil {
		_ = cm.Close(ctx)
		return nil, fmt.Errorf("compile plugin %q: %w", name, err)
	}
	if err := e.register(m); err != nil {
		_ = cm.Close(ctx)
		return nil, err
	}
	return m, nil
}

// register records a compiled module so that Close closes it, or
// refuses it (KindClosed) once the engine is closed: the caller then
// closes what it compiled.
func (e *Engine) register(m *Module) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed.Load() {
		return &Error{Kind: KindClosed, Message: "engine is closed"}
	}
	e.mods[m] = struct{}{}
	return nil
}

// compiled is the outcome of compile.
type compiled struct {
	rt     wazero.Runtime
	cm     wazero.CompiledModule
	maxMem int64
	hit    bool
	err    error
}

// compileWithin runs compile in a goroutine and gives up at the module
// limits' CompileTimeout. The abandoned compilation stops at wazero's
// next function boundary (it checks the context between functions when
// it has two workers or more, hence the minimum of two) and whatever it
// compiled is closed.
func (e *Engine) compileWithin(ctx context.Context, name string, wasm []byte, hit *bool) (wazero.Runtime, wazero.CompiledModule, int64, error) {
	timeout := e.cfg.Modules.CompileTimeout
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Engine.Close cancels the compilation and waits for it: wazero's
	// store must not be closed under a running compilation (it panicked).
	e.mu.Lock()
	if e.closed.Load() {
		e.mu.Unlock()
		return nil, nil, -1, &Error{Kind: KindClosed, Message: "engine is closed"}
	}
	e.compiling.Add(1)
	e.mu.Unlock()
	stop := context.AfterFunc(e.done, cancel)
	defer stop()
	done := make(chan compiled, 1)
	go func() {
		defer e.compiling.Done()
		var c compiled
		defer func() {
			if r := recover(); r != nil {
				c = compiled{err: fmt.Errorf("compiler panicked: %v", r)}
			}
			done <- c
		}()
		c.rt, c.cm, c.maxMem, c.err = e.compile(experimental.WithCompilationWorkers(cctx, max(2, e.compileWorkers())), name, wasm, &c.hit)
	}()
	select {
	case c := <-done:
		if c.err == nil || cctx.Err() == nil || ctx.Err() != nil {
			*hit = c.hit
			return c.rt, c.cm, c.maxMem, c.err
		}
		// wazero gave up on the expired context.
	case <-cctx.Done():
		go func() {
			if c := <-done; c.cm != nil {
				_ = c.cm.Close(context.Background())
			}
		}()
		if err := ctx.Err(); err != nil {
			return nil, nil, -1, err
		}
		if e.closed.Load() {
			return nil, nil, -1, &Error{Kind: KindClosed, Message: "engine is closed"}
		}
	}
	return nil, nil, -1, fmt.Errorf("compiling took longer than %v ([limits] compile_timeout)", timeout)
}

// compile compiles the instrumented module on e.rt or, when wasm cannot be
// instrumented because it exports a reserved name or has no memory, wasm
// with only the module limits applied (instrument.Bound) on the fallback
// runtime. Any other error (a malformed module, an index past the
// module's own, a module limit, an unsupported feature, an instrumented
// module that does not compile) refuses the module: compiling it
// uninstrumented would skip the checks. maxMem is the declared memory
// maximum that instrumentation removed (bytes, -1 for none), which the
// instance's allocator enforces instead.
func (e *Engine) compile(ctx context.Context, name string, wasm []byte, hit *bool) (rt wazero.Runtime, cm wazero.CompiledModule, maxMem int64, err error) {
	lim := e.cfg.Modules
	out, info, ierr := instrument.Instrument(wasm, lim)
	switch {
	case ierr == nil:
		cm, cached, err := e.compileModule(ctx, e.rt, false, name, out)
		if err != nil {
			return nil, nil, -1, err
		}
		*hit = cached
		maxMem = -1
		if info.MemoryMax >= 0 {
			maxMem = info.MemoryMax << 16
		}
		return e.rt, cm, maxMem, nil
	case errors.Is(ierr, instrument.ErrReserved), errors.Is(ierr, instrument.ErrNoMemory):
	default:
		return nil, nil, -1, ierr
	}
	bounded, err := instrument.Bound(wasm, lim)
	if err != nil {
		return nil, nil, -1, err
	}
	rt, err = e.safeRuntime(ctx)
	if err != nil {
		return nil, nil, -1, err
	}
	cm, *hit, err = e.compileModule(ctx, rt, true, name, bounded)
	if err != nil {
		return nil, nil, -1, err
	}
	e.log.Warn("plugin not instrumented for interruption; its calls use wazero's slower CloseOnContextDone",
		"plugin", name, "reason", ierr.Error())
	return rt, cm, -1, nil
}

// interruptible reports whether m was instrumented.
func (m *Module) interruptible() bool { return m.rt == m.e.rt }

func (m *Module) validate() error {
	ie := &ImportError{}
	extismMod := false
	for _, fd := range m.cm.ImportedFunctions() {
		mod, nm, _ := fd.Import()
		im := Import{Module: mod, Name: nm}
		m.imports = append(m.imports, im)
		var sig [2][]api.ValueType
		switch {
		case mod == abi.ImportModule:
			s, ok := wasmcp[nm]
			if !ok {
				ie.Unknown = append(ie.Unknown, im)
				continue
			}
			sig = s
		case mod == extismEnvModule || mod == extismUserModule:
			s, ok := m.e.extismSig(mod, nm)
			if !ok {
				ie.Unknown = append(ie.Unknown, im)
				continue
			}
			sig, extismMod = s, true
		case mod == abi.WASIModule && !strings.HasPrefix(nm, "sock_"):
			w, ok := m.e.wasi[nm]
			if !ok {
				ie.Unknown = append(ie.Unknown, im)
				continue
			}
			sig = [2][]api.ValueType{w.ParamTypes(), w.ResultTypes()}
		default:
			ie.Unknown = append(ie.Unknown, im)
			continue
		}
		if !slices.Equal(fd.ParamTypes(), sig[0]) || !slices.Equal(fd.ResultTypes(), sig[1]) {
			ie.Mismatched = append(ie.Mismatched, im)
			ie.Signatures = append(ie.Signatures, "got "+sigString(fd.ParamTypes(), fd.ResultTypes())+", want "+sigString(sig[0], sig[1]))
		}
	}
	for _, md := range m.cm.ImportedMemories() {
		mod, nm, _ := md.Import()
		m.imports = append(m.imports, Import{Module: mod, Name: nm})
		ie.Unknown = append(ie.Unknown, Import{Module: mod, Name: nm})
	}
	if len(ie.Unknown) > 0 || len(ie.Mismatched) > 0 {
		return ie
	}

	mem, ok := m.cm.ExportedMemories()[abi.ExportMemory]
	if !ok {
		return badModule("module does not export memory")
	}
	m.minMem = uint64(mem.Min()) << 16
	fns := m.cm.ExportedFunctions()
	_, hasStartSection := fns[instrument.StartName]
	if m.interruptible() {
		delete(fns, instrument.StartName) // added by instrument; not the plugin's
	}
	for n := range fns {
		m.exports = append(m.exports, n)
	}
	slices.Sort(m.exports)
	if extismMod {
		return m.validateExtism(fns, hasStartSection)
	}
	noArgs := func(n string, results ...api.ValueType) (present bool, err error) {
		fd, ok := fns[n]
		if !ok {
			return false, nil
		}
		if len(fd.ParamTypes()) != 0 || !slices.Equal(fd.ResultTypes(), results) {
			return true, badModule(fmt.Sprintf("export %s has the wrong signature %s, want %s",
				n, sigString(fd.ParamTypes(), fd.ResultTypes()), sigString(nil, results)))
		}
		return true, nil
	}
	hasCall, err := noArgs(abi.ExportCall, i32)
	if err != nil {
		return err
	}
	hasInit, err := noArgs(abi.ExportInitialize)
	if err != nil {
		return err
	}
	hasStart, err := noArgs(abi.ExportStart)
	if err != nil {
		return err
	}
	switch {
	case hasCall:
		m.mode = Reactor
		if hasInit {
			m.init = abi.ExportInitialize
		} else if hasStart {
			// AssemblyScript's WASI shim: a _start that does not exit.
			m.init = abi.ExportStart
		}
	case hasStart:
		m.mode = Command
		m.init = abi.ExportStart
	default:
		return badModule("module exports neither wasmcp_call nor _start")
	}
	m.setStarts(hasStartSection)
	return nil
}

// setStarts lists what the pool runs itself, interruptibly, when it
// instantiates an instrumented module (see instantiate): the start
// section moved out by instrument, then the init export.
func (m *Module) setStarts(hasStartSection bool) {
	if !m.interruptible() {
		return
	}
	if hasStartSection {
		m.starts = append(m.starts, instrument.StartName)
	}
	if m.init != "" {
		m.starts = append(m.starts, m.init)
	}
}

func badModule(msg string) *Error {
	return &Error{Kind: KindBadModule, Message: msg}
}

func sigString(params, results []api.ValueType) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, p := range params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(api.ValueTypeName(p))
	}
	b.WriteString(") -> (")
	for i, r := range results {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(api.ValueTypeName(r))
	}
	b.WriteByte(')')
	return b.String()
}

// Name returns the name given to Compile.
func (m *Module) Name() string { return m.name }

// Mode returns how the module is called.
func (m *Module) Mode() Mode { return m.mode }

// Imports returns the module's imports in declaration order.
func (m *Module) Imports() []Import { return slices.Clone(m.imports) }

// Exports returns the names of the module's exported functions, sorted.
func (m *Module) Exports() []string { return slices.Clone(m.exports) }

// Size returns the size of the wasm binary in bytes.
func (m *Module) Size() int { return m.size }

// interrupt stops the running calls of m's pools (Engine.Close).
func (m *Module) interrupt() {
	m.mu.Lock()
	pools := slices.Collect(maps.Keys(m.pools))
	m.mu.Unlock()
	for _, p := range pools {
		p.interruptAll()
	}
}

// Close closes the module's pools (see Pool.Close) and releases the
// compiled code. It is idempotent.
func (m *Module) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	pools := slices.Collect(maps.Keys(m.pools))
	m.mu.Unlock()
	for _, p := range pools {
		_ = p.Close(ctx)
	}
	m.e.mu.Lock()
	delete(m.e.mods, m)
	m.e.mu.Unlock()
	if m.comp != nil {
		return m.comp.Close(ctx)
	}
	return m.cm.Close(ctx)
}
