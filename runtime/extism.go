package runtime

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/internal/denials"
	"github.com/wasmcp/wasmcp/runtime/internal/extism"
)

// This file runs Extism plugins: modules that import extism:host/env. The
// Extism kernel is native Go (package runtime/internal/extism): its memory
// is a Go arena the guest reaches only through the kernel functions, never
// part of the guest's linear memory, and reset at every call. It may grow
// to what the linear memory leaves of Limits.Memory at the time (the
// linear memory may still grow to Limits.Memory after it, so an instance
// holds at most twice the limit); vars live as long as
// the instance and are bounded to extism.DefaultMaxVarBytes. A hostile
// handle gets 0 or a no-op (see package extism).
//
// The kernel functions that need the host go through the call's Host with
// the wasmcp/1 methods, so the plugin's grants apply unchanged:
//
//	config_get(key)           Host.Call("config/get", {key}) -> the value, or 0
//	http_request(req, body)   Host.Call("http/fetch", ...) -> the body; status and
//	                          headers for http_status_code/http_headers. A refused
//	                          or failed request traps, as in Extism.
//	log_*(msg)                Host.Log (trace and debug 0, info 1, warn 3, error 4)
//	get_log_level()           2 (info): the PDKs skip debug and trace lines
//
// and the functions of extism:host/user (Config.ExtismUser: hyper-mcp's,
// which package plugins lists) call Host.Call with their own name and the
// JSON of their handle ("{}" without one); a result becomes a handle (0 on an
// errno), and abi.ErrCanceled traps, stopping the guest.

// extismLogLevel is what get_log_level answers: info, in Extism's numbering
// (trace 0, debug 1, info 2, warn 3, error 4).
const extismLogLevel = 2

// maxExtismError bounds an error_set message kept by the host.
const maxExtismError = 64 << 10

var (
	i64             = api.ValueTypeI64
	errNoExtism     = errors.New("not an Extism plugin")
	errHTTPDenied   = errors.New("request not granted by the plugin's http grants")
	errParamsTooBig = fmt.Errorf("over the %d MiB limit of a host call's params", maxCallParams>>20)
)

// cut is s as an error message names it: at most denials.MaxField bytes,
// with a marker naming its length.
func cut(s string) string { return denials.Field(s) }

// extismFn is one host function: its signature and implementation.
type extismFn struct {
	params, results []api.ValueType
	fn              api.GoModuleFunc
}

var extismEnv = map[string]extismFn{
	"alloc":            {[]api.ValueType{i64}, []api.ValueType{i64}, extAlloc},
	"free":             {[]api.ValueType{i64}, nil, extFree},
	"length":           {[]api.ValueType{i64}, []api.ValueType{i64}, extLength},
	"length_unsafe":    {[]api.ValueType{i64}, []api.ValueType{i64}, extLength},
	"load_u8":          {[]api.ValueType{i64}, []api.ValueType{i32}, extLoadU8},
	"load_u64":         {[]api.ValueType{i64}, []api.ValueType{i64}, extLoadU64},
	"store_u8":         {[]api.ValueType{i64, i32}, nil, extStoreU8},
	"store_u64":        {[]api.ValueType{i64, i64}, nil, extStoreU64},
	"input_length":     {nil, []api.ValueType{i64}, extInputLength},
	"input_load_u8":    {[]api.ValueType{i64}, []api.ValueType{i32}, extInputLoadU8},
	"input_load_u64":   {[]api.ValueType{i64}, []api.ValueType{i64}, extInputLoadU64},
	"input_offset":     {nil, []api.ValueType{i64}, extInputOffset},
	"output_set":       {[]api.ValueType{i64, i64}, nil, extOutputSet},
	"error_set":        {[]api.ValueType{i64}, nil, extErrorSet},
	"error_get":        {nil, []api.ValueType{i64}, extErrorGet},
	"config_get":       {[]api.ValueType{i64}, []api.ValueType{i64}, extConfigGet},
	"var_get":          {[]api.ValueType{i64}, []api.ValueType{i64}, extVarGet},
	"var_set":          {[]api.ValueType{i64, i64}, nil, extVarSet},
	"http_request":     {[]api.ValueType{i64, i64}, []api.ValueType{i64}, extHTTPRequest},
	"http_status_code": {nil, []api.ValueType{i32}, extHTTPStatus},
	"http_headers":     {nil, []api.ValueType{i64}, extHTTPHeaders},
	"log_trace":        {[]api.ValueType{i64}, nil, extLog(abi.LevelDebug)},
	"log_debug":        {[]api.ValueType{i64}, nil, extLog(abi.LevelDebug)},
	"log_info":         {[]api.ValueType{i64}, nil, extLog(abi.LevelInfo)},
	"log_warn":         {[]api.ValueType{i64}, nil, extLog(abi.LevelWarning)},
	"log_error":        {[]api.ValueType{i64}, nil, extLog(abi.LevelError)},
	"get_log_level":    {nil, []api.ValueType{i32}, extGetLogLevel},
	"reset":            {nil, nil, extReset},
}

// The Extism host modules.
const (
	extismEnvModule  = "extism:host/env"
	extismUserModule = "extism:host/user"
)

// extismUserTable returns fns by name, or an error for an empty or
// repeated name.
func extismUserTable(fns []ExtismFunction) (map[string]ExtismFunction, error) {
	t := make(map[string]ExtismFunction, len(fns))
	for _, f := range fns {
		if _, dup := t[f.Name]; dup || f.Name == "" {
			return nil, fmt.Errorf("Config.ExtismUser: empty or repeated function name %q", f.Name)
		}
		t[f.Name] = f
	}
	return t, nil
}

// extismSig returns the signature of an Extism host function.
func (e *Engine) extismSig(mod, name string) ([2][]api.ValueType, bool) {
	if mod == extismEnvModule {
		f, ok := extismEnv[name]
		return [2][]api.ValueType{f.params, f.results}, ok
	}
	u, ok := e.extismUser[name]
	return u.sig(), ok
}

// sig is the signature of f: an i64 handle in and out, as Param and
// Result say.
func (f ExtismFunction) sig() [2][]api.ValueType {
	var sig [2][]api.ValueType
	if f.Param {
		sig[0] = []api.ValueType{i64}
	}
	if f.Result {
		sig[1] = []api.ValueType{i64}
	}
	return sig
}

// instantiateExtism registers the Extism host modules in rt.
func (e *Engine) instantiateExtism(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(extismEnvModule)
	for _, name := range sortedKeys(extismEnv) {
		f := extismEnv[name]
		b.NewFunctionBuilder().WithGoModuleFunction(f.fn, f.params, f.results).Export(name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return err
	}
	b = rt.NewHostModuleBuilder(extismUserModule)
	for _, name := range sortedKeys(e.extismUser) {
		f := e.extismUser[name]
		sig := f.sig()
		b.NewFunctionBuilder().WithGoModuleFunction(userFunc(f), sig[0], sig[1]).Export(name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// extismState is the Extism side of an instance's call state.
type extismState struct {
	k       extism.Kernel
	limit   uint64 // Limits.Memory, shared by the kernel and the linear memory
	status  int32  // of the last http_request
	headers []byte // of the last http_request, JSON
}

// allocKernel is kernelOf for a function that allocates: the kernel may
// use what the linear memory leaves of Limits.Memory, so the two together
// stay within the plugin's memory limit when the kernel grows.
func allocKernel(ctx context.Context, m api.Module) (*callState, *extism.Kernel) {
	st, k := kernelOf(ctx)
	if k != nil {
		used := uint64(0)
		if m != nil {
			if mem := m.Memory(); mem != nil {
				used = uint64(mem.Size())
			}
		}
		k.Limit = st.ext.limit - min(used, st.ext.limit)
	}
	return st, k
}

// kernelOrZero is kernelOf for a function that answers a value in s[0]:
// outside an Extism call it sets s[0] to 0 and returns nil.
func kernelOrZero(ctx context.Context, s []uint64) *extism.Kernel {
	if x := stateOf(ctx).ext; x != nil {
		return &x.k
	}
	s[0] = 0
	return nil
}

// kernelOf returns the kernel of the instance running ctx's call, or nil
// outside an Extism call.
func kernelOf(ctx context.Context) (*callState, *extism.Kernel) {
	st := stateOf(ctx)
	if st.ext == nil {
		return st, nil
	}
	return st, &st.ext.k
}

func extAlloc(ctx context.Context, m api.Module, s []uint64) {
	_, k := allocKernel(ctx, m)
	if k == nil {
		s[0] = 0
		return
	}
	s[0] = k.Alloc(s[0])
}

func extFree(ctx context.Context, _ api.Module, s []uint64) {
	if _, k := kernelOf(ctx); k != nil {
		k.Free(s[0])
	}
}

func extLength(ctx context.Context, _ api.Module, s []uint64) {
	if k := kernelOrZero(ctx, s); k != nil {
		s[0] = k.Length(s[0])
	}
}

func extLoadU8(ctx context.Context, _ api.Module, s []uint64) {
	if k := kernelOrZero(ctx, s); k != nil {
		s[0] = uint64(k.LoadU8(s[0]))
	}
}

func extLoadU64(ctx context.Context, _ api.Module, s []uint64) {
	if k := kernelOrZero(ctx, s); k != nil {
		s[0] = k.LoadU64(s[0])
	}
}

func extStoreU8(ctx context.Context, _ api.Module, s []uint64) {
	if _, k := kernelOf(ctx); k != nil {
		k.StoreU8(s[0], uint8(s[1]))
	}
}

func extStoreU64(ctx context.Context, _ api.Module, s []uint64) {
	if _, k := kernelOf(ctx); k != nil {
		k.StoreU64(s[0], s[1])
	}
}

func extInputLength(ctx context.Context, _ api.Module, s []uint64) {
	if k := kernelOrZero(ctx, s); k != nil {
		s[0] = k.InputLength()
	}
}

func extInputLoadU8(ctx context.Context, _ api.Module, s []uint64) {
	if k := kernelOrZero(ctx, s); k != nil {
		s[0] = uint64(k.InputLoadU8(s[0]))
	}
}

func extInputLoadU64(ctx context.Context, _ api.Module, s []uint64) {
	if k := kernelOrZero(ctx, s); k != nil {
		s[0] = k.InputLoadU64(s[0])
	}
}

// extInputOffset returns a block holding a copy of the input.
func extInputOffset(ctx context.Context, m api.Module, s []uint64) {
	_, k := allocKernel(ctx, m)
	if k == nil {
		s[0] = 0
		return
	}
	s[0] = k.AllocBytes(k.Input())
}

// extOutputSet sets the call's output to a copy of (offset, length), which
// must lie in one block (else a no-op); past MaxOutput it traps.
func extOutputSet(ctx context.Context, _ api.Module, s []uint64) {
	st, k := kernelOf(ctx)
	if k == nil {
		return
	}
	b := k.Range(s[0], s[1])
	if b == nil {
		return
	}
	if len(b) > st.maxOut {
		trap("output_set", errOutputTooLarge)
	}
	st.out = append(st.out[:0], b...)
}

func extErrorSet(ctx context.Context, _ api.Module, s []uint64) {
	if _, k := kernelOf(ctx); k != nil {
		k.SetError(s[0], maxExtismError)
	}
}

func extErrorGet(ctx context.Context, m api.Module, s []uint64) {
	_, k := allocKernel(ctx, m)
	s[0] = 0
	if k == nil {
		return
	}
	if msg, ok := k.Error(); ok {
		s[0] = k.AllocBytes(msg)
	}
}

func extVarGet(ctx context.Context, m api.Module, s []uint64) {
	_, k := allocKernel(ctx, m)
	h := s[0]
	s[0] = 0
	if k == nil {
		return
	}
	if key := k.Bytes(h); key != nil {
		s[0] = k.AllocBytes(k.Var(key))
	}
}

// extVarSet sets a var to a copy of a block; value 0 deletes it. A bad
// handle, or vars over their bound, is a no-op.
func extVarSet(ctx context.Context, _ api.Module, s []uint64) {
	_, k := kernelOf(ctx)
	if k == nil {
		return
	}
	key := k.Bytes(s[0])
	if key == nil {
		return
	}
	if s[1] == 0 {
		k.SetVar(key, nil)
		return
	}
	if v := k.Bytes(s[1]); v != nil {
		k.SetVar(key, v)
	}
}

func extLog(level int32) api.GoModuleFunc {
	return func(ctx context.Context, _ api.Module, s []uint64) {
		st, k := kernelOf(ctx)
		if k == nil || st.host == nil {
			return
		}
		if msg := k.Bytes(s[0]); msg != nil {
			st.host.Log(ctx, level, msg)
		}
	}
}

func extGetLogLevel(_ context.Context, _ api.Module, s []uint64) { s[0] = extismLogLevel }

func extReset(ctx context.Context, _ api.Module, _ []uint64) {
	if _, k := kernelOf(ctx); k != nil {
		k.Reset(k.Input())
	}
}

// hostCall calls the Host with params marshalled from v.
func hostCall(ctx context.Context, st *callState, method string, v any) ([]byte, int32) {
	if st.host == nil {
		return nil, abi.ErrDenied
	}
	params, err := json.Marshal(v)
	if err != nil {
		return nil, abi.ErrBadParams
	}
	return st.host.Call(ctx, method, params)
}

func extConfigGet(ctx context.Context, m api.Module, s []uint64) {
	st, k := allocKernel(ctx, m)
	h := s[0]
	s[0] = 0
	if k == nil {
		return
	}
	key := k.Bytes(h)
	if key == nil {
		return
	}
	res, errno := hostCall(ctx, st, abi.HostConfigGet, struct {
		Key string `json:"key"`
	}{string(key)})
	if errno != 0 {
		return
	}
	var v struct {
		Value *string `json:"value"`
	}
	if json.Unmarshal(res, &v) != nil || v.Value == nil {
		return
	}
	s[0] = k.AllocBytes([]byte(*v.Value))
}

// extismRequest is the request JSON of http_request.
type extismRequest struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
}

// extHTTPRequest checks in this order, so that a refused request costs
// no copy of its body: the request JSON against the params cap, the
// grants (Granter), the body against the params cap, then it builds the
// params, the body base64-encoded once into the call's params buffer.
func extHTTPRequest(ctx context.Context, m api.Module, s []uint64) {
	st, k := allocKernel(ctx, m)
	if k == nil {
		s[0] = 0
		return
	}
	st.ext.status, st.ext.headers = 0, nil
	raw := k.Bytes(s[0])
	if len(raw) > maxCallParams {
		trap("http_request", fmt.Errorf("request JSON of %d bytes: %w", len(raw), errParamsTooBig))
	}
	var req extismRequest
	if raw == nil || json.Unmarshal(raw, &req) != nil || req.URL == "" {
		trap("http_request", errors.New("invalid request JSON"))
	}
	if req.Method == "" {
		req.Method = "GET"
	}
	p := struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers,omitempty"`
	}{Method: strings.ToUpper(req.Method), URL: req.URL, Headers: req.Headers}
	var body []byte
	if s[1] != 0 {
		if body = k.Bytes(s[1]); body == nil {
			trap("http_request", errors.New("invalid body handle"))
		}
	}
	var res []byte
	var errno int32
	switch {
	case st.host == nil:
		errno = abi.ErrDenied
	case !MayCall(st.host, abi.HostHTTPFetch):
		p.Headers = nil // refused whatever it holds: only what the audit names
		res, errno = hostCall(ctx, st, abi.HostHTTPFetch, p)
	default:
		head, err := json.Marshal(p)
		if err != nil {
			trap("http_request", fmt.Errorf("invalid request: %w", err))
		}
		params := head
		if body != nil {
			const member = `,"body_base64":""`
			n := len(head) + len(member) + base64.StdEncoding.EncodedLen(len(body))
			if n > maxCallParams {
				trap("http_request", fmt.Errorf("%s %s: body of %d bytes: %w", p.Method, cut(req.URL), len(body), errParamsTooBig))
			}
			params = append(append(st.params[:0], head[:len(head)-1]...), member[:len(member)-1]...)
			params = base64.StdEncoding.AppendEncode(params, body)
			params = append(params, `"}`...)
			st.params = params
		}
		res, errno = st.host.Call(ctx, abi.HostHTTPFetch, params)
	}
	switch {
	case errno == abi.ErrDenied:
		trap("http_request", fmt.Errorf("%w: %s %s", errHTTPDenied, p.Method, cut(req.URL)))
	case errno == abi.ErrFailed:
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(res, &e)
		trap("http_request", fmt.Errorf("%s %s: %s", p.Method, cut(req.URL), e.Message))
	case errno != 0:
		trap("http_request", fmt.Errorf("%s %s: refused (errno %d)", p.Method, cut(req.URL), errno))
	}
	var r struct {
		Status     int32             `json:"status"`
		Headers    map[string]string `json:"headers"`
		Body       *string           `json:"body"`
		BodyBase64 *string           `json:"body_base64"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		trap("http_request", fmt.Errorf("bad response from the host: %w", err))
	}
	body = nil
	switch {
	case r.BodyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*r.BodyBase64)
		if err != nil {
			trap("http_request", fmt.Errorf("bad response body from the host: %w", err))
		}
		body = b
	case r.Body != nil:
		body = []byte(*r.Body)
	}
	st.ext.status = r.Status
	if r.Headers != nil {
		st.ext.headers, _ = json.Marshal(r.Headers)
	}
	s[0] = 0
	if len(body) > 0 {
		if s[0] = k.AllocBytes(body); s[0] == 0 {
			trap("http_request", fmt.Errorf("response body of %d bytes over the kernel memory limit", len(body)))
		}
	}
}

func extHTTPStatus(ctx context.Context, _ api.Module, s []uint64) {
	st, _ := kernelOf(ctx)
	s[0] = 0
	if st.ext != nil {
		s[0] = uint64(uint32(st.ext.status))
	}
}

func extHTTPHeaders(ctx context.Context, m api.Module, s []uint64) {
	st, k := allocKernel(ctx, m)
	s[0] = 0
	if k != nil && st.ext.headers != nil {
		s[0] = k.AllocBytes(st.ext.headers)
	}
}

// userFunc is the extism:host/user function f: Host.Call(f.Name, the
// JSON of its handle or "{}").
func userFunc(f ExtismFunction) api.GoModuleFunc {
	name, param, result := f.Name, f.Param, f.Result
	return func(ctx context.Context, m api.Module, s []uint64) {
		st, k := allocKernel(ctx, m)
		var res []byte
		var errno int32 = abi.ErrDenied
		if k != nil && st.host != nil {
			// Grants first, then the cap, then the call, on the block
			// itself (the arena never moves; the Host copies what it
			// keeps).
			params := []byte("{}")
			switch {
			case !param || !MayCall(st.host, name):
			case k.Length(s[0]) > maxCallParams:
				errno, params = abi.ErrTooBig, nil
			default:
				if params = k.Bytes(s[0]); params == nil {
					params = []byte("null")
				}
			}
			if params != nil {
				res, errno = st.host.Call(ctx, name, params)
			}
		}
		if errno == abi.ErrCanceled {
			trap(name, context.Canceled)
		}
		if !result {
			return
		}
		s[0] = 0
		if errno == 0 && k != nil {
			s[0] = k.AllocBytes(res)
		}
	}
}

// extismEntry runs the export that the call's ctx names (CallExport) on one
// Extism instance, in place of wasmcp_call: it resets the kernel with the
// input, calls the export, and sets stack[0] to abi.StatusOK with the
// output, or abi.StatusError with the error message when the export
// returned non-zero.
type extismEntry struct {
	mod api.Module
	st  *callState
	fns map[string]api.Function
}

func (e *extismEntry) CallWithStack(ctx context.Context, stack []uint64) error {
	name := e.st.export
	fn := e.fns[name]
	if fn == nil {
		if fn = e.mod.ExportedFunction(name); fn == nil {
			return fmt.Errorf("plugin has no export %q", name)
		}
		e.fns[name] = fn
	}
	x := e.st.ext
	x.k.Reset(e.st.input)
	x.status, x.headers = 0, nil
	defer x.k.Reset(nil)
	if err := fn.CallWithStack(ctx, stack); err != nil {
		return err
	}
	var rc int32
	if len(fn.Definition().ResultTypes()) == 1 {
		rc = int32(stack[0])
	}
	if rc == 0 {
		stack[0] = abi.StatusOK
		return nil
	}
	stack[0] = abi.StatusError
	msg, ok := x.k.Error()
	if !ok || len(msg) == 0 {
		msg = fmt.Appendf(nil, "plugin function %s returned %d", name, rc)
	}
	if len(msg) > e.st.maxOut {
		msg = msg[:e.st.maxOut]
	}
	e.st.out = append(e.st.out[:0], msg...)
	return nil
}

// entry returns what a pooled instance calls: wasmcp_call, or for an
// Extism module an extismEntry with a fresh kernel bounded by
// Limits.Memory.
func (p *Pool) entry(mod api.Module, st *callState) entryFunc {
	if p.m.mode != Extism {
		return mod.ExportedFunction(abi.ExportCall)
	}
	st.ext = &extismState{k: extism.Kernel{Limit: p.lim.Memory}, limit: p.lim.Memory}
	return &extismEntry{mod: mod, st: st, fns: map[string]api.Function{}}
}

// entryFunc is the function a reactor call runs.
type entryFunc interface {
	CallWithStack(ctx context.Context, stack []uint64) error
}

// CallExport runs export of an Extism module (Mode Extism) with input as
// the Extism input, under the same limits, pool and classification as
// Call: status abi.StatusOK with the output set by output_set, or
// abi.StatusError with the error message when the export returned
// non-zero (error_set's message, else one naming the return code). A
// module that is not Extism, or has no such export taking nothing and
// returning an i32 or nothing, fails with KindBadModule without running.
func (p *Pool) CallExport(ctx context.Context, export string, input []byte, h Host, opts *CallOptions) (status uint32, output []byte, err error) {
	if p.m.mode != Extism {
		return 0, nil, &Error{Kind: KindBadModule, Message: errNoExtism.Error(), Err: errNoExtism}
	}
	if !slices.Contains(p.m.extismExports, export) {
		return 0, nil, badModule(fmt.Sprintf("plugin has no callable export %q", export))
	}
	return p.call(ctx, job{input: input, export: export}, h, opts)
}

// validateExtism finishes validate for an Extism module: the exports that
// take nothing and return an i32 or nothing are callable; _initialize, if
// exported, runs once per instance.
func (m *Module) validateExtism(fns map[string]api.FunctionDefinition, hasStartSection bool) error {
	m.mode = Extism
	for _, n := range m.exports {
		fd := fns[n]
		if len(fd.ParamTypes()) != 0 {
			continue
		}
		if r := fd.ResultTypes(); len(r) == 0 || len(r) == 1 && r[0] == i32 {
			m.extismExports = append(m.extismExports, n)
		}
	}
	if slices.Contains(m.extismExports, abi.ExportInitialize) {
		m.init = abi.ExportInitialize
	}
	m.setStarts(hasStartSection)
	return nil
}

// ExtismExports returns the exports an Extism module can run with
// CallExport, sorted; nil for other modules.
func (m *Module) ExtismExports() []string { return slices.Clone(m.extismExports) }
