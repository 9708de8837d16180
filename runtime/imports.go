package runtime

import (
	"context"
	"errors"
	"math"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// This file implements the wasmcp host module (ABI §2). The functions find
// their per-call state in the ctx wazero hands them (a *callCtx). Every
// guest (ptr, len) goes through api.Memory's bounds-checked Read/Write, and
// the answer to a bad range is, per import:
//
//	input_len()               no pointers
//	input_read(ptr, len)      traps (invalid memory range)
//	output_write(ptr, len)    traps (invalid memory range); traps on the first byte over MaxOutput
//	log(level, ptr, len)      traps (invalid memory range)
//	call(mp, ml, pp, pl)      returns abi.ErrBadParams (-2); oversized params: abi.ErrTooBig
//	result_read(ptr, len)     traps (invalid memory range)
//
// A trap is a panic with an *importTrap, which wazero recovers and returns
// from the guest call; it never reaches the server.

const (
	// maxMethodLen bounds the method name of the call import.
	maxMethodLen = 256
	// maxCallParams bounds the params of one call import.
	maxCallParams = 16 << 20
)

var (
	errBadMemory      = errors.New("invalid memory range")
	errOutputTooLarge = errors.New("output over the limit")
)

// importTrap is the panic value of an import that traps the guest.
type importTrap struct {
	fn  string
	err error
}

func (t *importTrap) Error() string { return t.fn + ": " + t.err.Error() }
func (t *importTrap) Unwrap() error { return t.err }

// callState is the state of the call an instance is running: the request,
// the response so far, the host and the pending result of the call import.
// Reactor instances keep theirs and reuse its buffers from call to call.
type callState struct {
	input  []byte
	inPos  int
	out    []byte
	maxOut int
	host   Host
	result []byte
	resPos int
	params []byte         // scratch copy of the call import's params
	ext    *extismState   // Extism modules: the kernel (see extism.go)
	export string         // Extism modules: the export the call runs (CallExport)
	comp   *componentCall // components: the call (CallComponent)
}

// begin resets s for a new call.
func (s *callState) begin(input []byte, h Host, maxOut int) {
	s.input, s.inPos = input, 0
	s.out = s.out[:0]
	s.maxOut = maxOut
	s.host = h
	s.result, s.resPos = nil, 0
}

// end drops the references a call left behind, so a pooled instance keeps
// neither the caller's input nor the host.
func (s *callState) end() {
	s.input, s.host, s.result, s.comp = nil, nil, nil, nil
	if cap(s.params) > 1<<20 {
		s.params = nil
	}
}

type stateKey struct{}

// callCtx is the ctx of a guest call that has no deadlineCtx of its own
// (an instance's start functions): the caller's ctx plus the call's
// state. A call to wasmcp_call runs under its deadlineCtx, which carries
// its state itself (one allocation per call, not two); either is
// allocated per call because wazero's deadline watcher may still read it
// after the call returns.
type callCtx struct {
	context.Context
	st *callState
}

// Value returns the call state for stateKey and defers to the parent ctx
// otherwise.
func (c *callCtx) Value(k any) any {
	if _, ok := k.(stateKey); ok {
		return c.st
	}
	return c.Context.Value(k)
}

// AfterFunc arranges for f to run when c is done, as context.AfterFunc
// does: the context package calls it for contexts that host functions
// derive from c (context.WithTimeout and the like), which would otherwise
// each start a goroutine to watch c (a call's deadlineCtx is not one of
// the context package's own types).
func (c *callCtx) AfterFunc(f func()) func() bool { return context.AfterFunc(c.Context, f) }

func stateOf(ctx context.Context) *callState {
	switch c := ctx.(type) {
	case *deadlineCtx:
		if c.st != nil {
			return c.st
		}
	case *callCtx:
		return c.st
	}
	st, _ := ctx.Value(stateKey{}).(*callState)
	if st == nil {
		st = &callState{} // not inside a runtime call: nothing to read, nothing may be written
	}
	return st
}

func trap(fn string, err error) { panic(&importTrap{fn: fn, err: err}) }

func inputLen(ctx context.Context, _ api.Module, stack []uint64) {
	stack[0] = uint64(uint32(len(stateOf(ctx).input)))
}

func inputRead(ctx context.Context, m api.Module, stack []uint64) {
	st := stateOf(ctx)
	readRest(m, stack, st.input, &st.inPos, abi.FuncInputRead)
}

// readRest is input_read and result_read: it copies up to stack[1] bytes
// of src from *pos to the guest's memory at stack[0], advances *pos, and
// answers the count (0 at the end).
func readRest(m api.Module, stack []uint64, src []byte, pos *int, fn string) {
	ptr, n := uint32(stack[0]), uint32(stack[1])
	rest := src[*pos:]
	if uint64(n) > uint64(len(rest)) {
		n = uint32(len(rest))
	}
	if n > 0 {
		if !m.Memory().Write(ptr, rest[:n]) {
			trap(fn, errBadMemory)
		}
		*pos += int(n)
	}
	stack[0] = uint64(n)
}

func outputWrite(ctx context.Context, m api.Module, stack []uint64) {
	st := stateOf(ctx)
	ptr, n := uint32(stack[0]), uint32(stack[1])
	if n == 0 {
		return
	}
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		trap(abi.FuncOutputWrite, errBadMemory)
	}
	if len(st.out)+len(b) > st.maxOut {
		trap(abi.FuncOutputWrite, errOutputTooLarge)
	}
	st.out = append(st.out, b...)
}

func logImport(ctx context.Context, m api.Module, stack []uint64) {
	st := stateOf(ctx)
	level, ptr, n := int32(stack[0]), uint32(stack[1]), uint32(stack[2])
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		trap(abi.FuncLog, errBadMemory)
	}
	if st.host != nil {
		st.host.Log(ctx, level, b)
	}
}

func callImport(ctx context.Context, m api.Module, stack []uint64) {
	stack[0] = uint64(uint32(doCall(ctx, m, uint32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3]))))
}

func doCall(ctx context.Context, m api.Module, mp, ml, pp, pl uint32) int32 {
	st := stateOf(ctx)
	st.result, st.resPos = nil, 0
	if ctx.Err() != nil {
		return abi.ErrCanceled
	}
	if ml > maxMethodLen {
		return abi.ErrUnknown
	}
	if pl > maxCallParams {
		return abi.ErrTooBig
	}
	mem := m.Memory()
	mb, ok := mem.Read(mp, ml)
	if !ok {
		return abi.ErrBadParams
	}
	method := internMethod(mb)
	pb, ok := mem.Read(pp, pl)
	if !ok {
		return abi.ErrBadParams
	}
	if st.host == nil {
		return abi.ErrDenied
	}
	st.params = append(st.params[:0], pb...)
	res, errno := st.host.Call(ctx, method, st.params)
	switch {
	case errno < 0:
		if errno == abi.ErrFailed {
			st.result = res
		}
		return errno
	case len(res) > math.MaxInt32:
		return abi.ErrTooBig
	}
	st.result = res
	return int32(len(res))
}

// internMethod returns the method name, without allocating for the names
// of ABI §5.
func internMethod(b []byte) string {
	switch string(b) {
	case abi.HostLog:
		return abi.HostLog
	case abi.HostProgress:
		return abi.HostProgress
	case abi.HostNotifyListChanged:
		return abi.HostNotifyListChanged
	case abi.HostNotifyResourceUpdate:
		return abi.HostNotifyResourceUpdate
	case abi.HostConfigGet:
		return abi.HostConfigGet
	case abi.HostHTTPFetch:
		return abi.HostHTTPFetch
	case abi.HostKVGet:
		return abi.HostKVGet
	case abi.HostKVSet:
		return abi.HostKVSet
	case abi.HostKVDelete:
		return abi.HostKVDelete
	case abi.HostKVList:
		return abi.HostKVList
	case abi.HostElicit:
		return abi.HostElicit
	case abi.HostSample:
		return abi.HostSample
	case abi.HostRoots:
		return abi.HostRoots
	}
	return string(b)
}

func resultRead(ctx context.Context, m api.Module, stack []uint64) {
	st := stateOf(ctx)
	readRest(m, stack, st.result, &st.resPos, abi.FuncResultRead)
}

// instantiateHostModule registers the wasmcp module in rt.
func instantiateHostModule(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(abi.ImportModule)
	add := func(name string, fn api.GoModuleFunc, params ...string) {
		sig := wasmcp[name]
		b.NewFunctionBuilder().WithGoModuleFunction(fn, sig[0], sig[1]).
			WithParameterNames(params...).Export(name)
	}
	add(abi.FuncInputLen, inputLen)
	add(abi.FuncInputRead, inputRead, "ptr", "len")
	add(abi.FuncOutputWrite, outputWrite, "ptr", "len")
	add(abi.FuncLog, logImport, "level", "ptr", "len")
	add(abi.FuncCall, callImport, "method_ptr", "method_len", "params_ptr", "params_len")
	add(abi.FuncResultRead, resultRead, "ptr", "len")
	_, err := b.Instantiate(ctx)
	return err
}
