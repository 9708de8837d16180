package hostapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/runtime"
)

// Grants is what the operator allows one plugin. The zero value grants
// nothing but the always-allowed methods (log, progress, notify/*).
type Grants struct {
	// HTTP lists URL rules, scheme://host[:port][/path-prefix]. A rule
	// naming a loopback, private or link-local IP (or localhost, or a name
	// under a private-use suffix such as .internal) explicitly allows that
	// address; see http.go.
	HTTP []string
	// KV allows kv/get, kv/set, kv/delete and kv/list in the plugin's own
	// namespace.
	KV bool
	// Config maps the keys config/get may read to their values (already
	// ${VAR}-expanded by the configuration).
	Config map[string]string
	// Elicitation, Sampling and Roots allow the blocking client requests
	// (legacy sessions only).
	Elicitation, Sampling, Roots bool
}

// Options configures a Host. Plugin is required; zero fields are denials or
// defaults.
type Options struct {
	// Plugin names the plugin: the KV namespace and the "plugin" log
	// attribute.
	Plugin string
	Grants Grants
	// KV is the store behind kv/*; nil denies kv/* even when granted.
	KV KV
	// HTTP bounds http/fetch; zero fields take the defaults documented on
	// HTTPPolicy.
	HTTP HTTPPolicy
	// Logger receives guest log lines and host-call failures; nil discards.
	Logger *slog.Logger
}

// Host is the host side of one plugin. It is safe for concurrent use and
// cheap to Bind per call.
type Host struct {
	plugin string
	grants Grants
	kv     KV
	http   *fetcher
	log    *slog.Logger
	// deniedAt is when Do last logged a denied request (UnixNano).
	deniedAt atomic.Int64
}

// New creates the Host of one plugin. It fails on a malformed HTTP rule.
func New(opts Options) (*Host, error) {
	if opts.Plugin == "" {
		return nil, fmt.Errorf("hostapi: plugin name is required")
	}
	h := &Host{plugin: opts.Plugin, grants: opts.Grants, kv: opts.KV, log: opts.Logger}
	if kv, ok := opts.KV.(*KVStore); ok && kv == nil {
		h.kv = nil // a nil *KVStore denies kv/*, as a nil KV does
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.log = h.log.With("plugin", opts.Plugin)
	f, err := newFetcher(opts.Grants.HTTP, opts.HTTP)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %w", opts.Plugin, err)
	}
	h.http = f
	return h, nil
}

// Bind returns the runtime.Host of one call, answering for client c. c may
// be nil (e.g. wasmcp/describe at load): log then goes to the Logger only,
// progress and notify/* are no-ops, the client requests answer
// abi.ErrUnsupported, and config/http/kv work as granted.
func (h *Host) Bind(c Client) runtime.Host {
	return h.BindAt(new(Binding), c)
}

// Binding is the storage of a bound Host (BindAt), for a caller that
// allocates it with its own per-call state rather than apart.
type Binding struct{ b bound }

// BindAt is Bind with the bound Host kept in b, which serves one call at
// a time.
func (h *Host) BindAt(b *Binding, c Client) runtime.Host {
	b.b = bound{h: h, c: c}
	return &b.b
}

// bound is a Host bound to one call's Client. It is used by one guest call
// at a time.
type bound struct {
	h         *Host
	c         Client
	notes     int // client notifications counted (see log.go)
	noteBytes int // their bytes
	logLines  int // plugin log lines for the server log
	changes   int // notify/* calls counted (see notify.go)
}

var _ runtime.Host = (*bound)(nil)

// Call dispatches one host call. It never panics.
func (b *bound) Call(ctx context.Context, method string, params []byte) (result []byte, errno int32) {
	if ctx.Err() != nil {
		return nil, abi.ErrCanceled
	}
	defer func() {
		if r := recover(); r != nil {
			b.h.log.Error("host call panicked", "method", method, "error", fmt.Sprint(r))
			result, errno = failed(codeInternal, "internal error")
		}
	}()
	switch method {
	case abi.HostLog:
		return b.logCall(ctx, params)
	case abi.HostProgress:
		return b.progress(params)
	case abi.HostNotifyListChanged:
		return b.listChanged(params)
	case abi.HostNotifyResourceUpdate:
		return b.resourceUpdated(params)
	case abi.HostStreamClose:
		return b.streamClose(params)
	case abi.HostTaskStart:
		return b.taskStart(params)
	case abi.HostConfigGet:
		return b.h.configGet(params)
	case abi.HostHTTPFetch:
		if len(b.h.http.rules) == 0 {
			return nil, abi.ErrDenied
		}
		return b.h.http.fetch(ctx, params)
	case abi.HostKVGet, abi.HostKVSet, abi.HostKVDelete, abi.HostKVList:
		if !b.h.grants.KV || b.h.kv == nil {
			return nil, abi.ErrDenied
		}
		return b.h.kvCall(ctx, method, params)
	case abi.HostElicit, abi.HostSample, abi.HostRoots:
		return b.request(ctx, method, params)
	}
	return nil, abi.ErrUnknown
}

var _ runtime.Granter = (*bound)(nil)

// MayCall implements runtime.Granter: false for a method the plugin's
// grants refuse whatever its params (http/fetch without an http rule,
// kv/* without kv, config/get without config, a client request not
// granted), so that the caller need not build their params.
func (b *bound) MayCall(method string) bool {
	switch method {
	case abi.HostHTTPFetch:
		return len(b.h.http.rules) > 0
	case abi.HostKVGet, abi.HostKVSet, abi.HostKVDelete, abi.HostKVList:
		return b.h.grants.KV && b.h.kv != nil
	case abi.HostConfigGet:
		return len(b.h.grants.Config) > 0
	case abi.HostElicit, abi.HostSample, abi.HostRoots:
		return b.h.grants.MayRequest(method) == nil
	}
	return true
}

// JSON-RPC-style codes of the error JSON that waits behind abi.ErrFailed.
const (
	codeInternal = -32603
	codeFailed   = -32000 // the host-side operation failed (network, timeout)
)

var empty = []byte(`{}`)

// failed returns an error JSON {"code","message"} with abi.ErrFailed.
func failed(code int, msg string) ([]byte, int32) {
	b, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg})
	return b, abi.ErrFailed
}

// decode unmarshals params into v; params must be a JSON object.
func decode(params []byte, v any) bool {
	if len(params) == 0 || params[0] != '{' && !isSpaceThenObject(params) {
		return false
	}
	return json.Unmarshal(params, v) == nil
}

func isSpaceThenObject(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}

// ok marshals v as the result with errno 0.
func ok(v any) ([]byte, int32) {
	b, err := json.Marshal(v)
	if err != nil {
		return failed(codeInternal, "cannot encode result")
	}
	return b, 0
}
