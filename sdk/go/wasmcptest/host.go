// Package wasmcptest helps test wasmcp plugins natively with go test: a
// fake [Host] (config values, an in-memory key-value store, HTTP through
// an http.Handler, scripted client answers, recorded logs and
// notifications) and a [Session] that builds request envelopes and decodes
// the answers.
//
//	h := wasmcptest.NewHost()
//	h.KVEnabled = true
//	s := wasmcptest.NewSession(plugin, h)
//	res, err := s.CallTool("greet", map[string]any{"name": "Ada"})
//
// The plugin's handlers run exactly as in the sandbox, except that host
// calls go to the fake host.
package wasmcptest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// Call is one host call the plugin made.
type Call struct {
	Method string
	Params json.RawMessage
}

// LogLine is one line written with the fast log import.
type LogLine struct {
	Level   int32
	Message string
}

// Host is a fake wasmcp host. Configure its fields before use; it is safe
// for concurrent use.
type Host struct {
	// Config are the values config/get returns; other keys are denied.
	Config map[string]string
	// KVEnabled grants the key-value store.
	KVEnabled bool
	// HTTP serves http/fetch requests; nil denies them. HTTPAllow, when
	// not empty, lists the URL prefixes allowed (others are denied).
	HTTP      http.Handler
	HTTPAllow []string
	// Client answers elicitation/create, sampling/createMessage and
	// roots/list; nil makes them unsupported (as on a stateless request).
	Client func(method string, params json.RawMessage) (result any, err error)
	// Override answers any method before the defaults; return ok false to
	// fall through.
	Override func(method string, params json.RawMessage) (result []byte, errno int32, ok bool)
	// Now is the clock for kv expiry; nil means time.Now.
	Now func() time.Time

	mu    sync.Mutex
	kv    map[string]kvEntry
	calls []Call
	logs  []LogLine
}

type kvEntry struct {
	value   string
	expires time.Time
}

// NewHost returns a fake host that grants nothing.
func NewHost() *Host { return &Host{} }

// Calls returns the host calls made so far, in order.
func (h *Host) Calls() []Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Call(nil), h.calls...)
}

// CallsTo returns the params of the calls to method, in order.
func (h *Host) CallsTo(method string) []json.RawMessage {
	var out []json.RawMessage
	for _, c := range h.Calls() {
		if c.Method == method {
			out = append(out, c.Params)
		}
	}
	return out
}

// Logs returns the lines written with the fast log import.
func (h *Host) Logs() []LogLine {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]LogLine(nil), h.logs...)
}

// KV returns a copy of the live key-value entries.
func (h *Host) KV() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]string{}
	for k, e := range h.kv {
		if !h.expired(e) {
			out[k] = e.value
		}
	}
	return out
}

// Log implements wasmcp.Host.
func (h *Host) Log(level int32, msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, LogLine{Level: level, Message: string(msg)})
}

// Call implements wasmcp.Host.
func (h *Host) Call(method string, params []byte) ([]byte, int32) {
	p := json.RawMessage(append([]byte(nil), params...))
	h.mu.Lock()
	h.calls = append(h.calls, Call{Method: method, Params: p})
	h.mu.Unlock()
	if !json.Valid(p) {
		return nil, abi.ErrBadParams
	}
	if h.Override != nil {
		if res, errno, ok := h.Override(method, p); ok {
			return res, errno
		}
	}
	switch method {
	case abi.HostLog, abi.HostProgress, abi.HostNotifyListChanged, abi.HostNotifyResourceUpdate, abi.HostStreamClose:
		return []byte("{}"), 0
	case abi.HostConfigGet:
		var q struct {
			Key string `json:"key"`
		}
		json.Unmarshal(p, &q)
		v, ok := h.Config[q.Key]
		if !ok {
			return nil, abi.ErrDenied
		}
		return marshal(map[string]string{"value": v})
	case abi.HostKVGet, abi.HostKVSet, abi.HostKVDelete, abi.HostKVList:
		if !h.KVEnabled {
			return nil, abi.ErrDenied
		}
		return h.kvCall(method, p)
	case abi.HostHTTPFetch:
		return h.fetch(p)
	case abi.HostElicit, abi.HostSample, abi.HostRoots:
		if h.Client == nil {
			return nil, abi.ErrUnsupported
		}
		res, err := h.Client(method, p)
		if err != nil {
			return failed(-32000, err.Error())
		}
		return marshal(res)
	}
	return nil, abi.ErrUnknown
}

func (h *Host) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Host) expired(e kvEntry) bool { return !e.expires.IsZero() && !h.now().Before(e.expires) }

func (h *Host) kvCall(method string, p json.RawMessage) ([]byte, int32) {
	var q struct {
		Key    string  `json:"key"`
		Value  *string `json:"value"`
		TTL    int64   `json:"ttl_s"`
		Prefix string  `json:"prefix"`
		Cursor string  `json:"cursor"`
	}
	if err := json.Unmarshal(p, &q); err != nil {
		return nil, abi.ErrBadParams
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.kv == nil {
		h.kv = map[string]kvEntry{}
	}
	switch method {
	case abi.HostKVGet:
		e, ok := h.kv[q.Key]
		if !ok || h.expired(e) {
			return []byte(`{"value":null}`), 0
		}
		return marshal(map[string]string{"value": e.value})
	case abi.HostKVSet:
		if q.Key == "" || q.Value == nil {
			return nil, abi.ErrBadParams
		}
		e := kvEntry{value: *q.Value}
		if q.TTL > 0 {
			e.expires = h.now().Add(time.Duration(q.TTL) * time.Second)
		}
		h.kv[q.Key] = e
		return []byte("{}"), 0
	case abi.HostKVDelete:
		delete(h.kv, q.Key)
		return []byte("{}"), 0
	default: // list: pages of 2 keys, so that plugins' cursor handling is exercised
		var keys []string
		for k, e := range h.kv {
			if strings.HasPrefix(k, q.Prefix) && !h.expired(e) && k > q.Cursor {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		res := map[string]any{"keys": keys}
		if len(keys) > 2 {
			res["keys"], res["cursor"] = keys[:2], keys[1]
		}
		if keys == nil {
			res["keys"] = []string{}
		}
		return marshal(res)
	}
}

func (h *Host) fetch(p json.RawMessage) ([]byte, int32) {
	var q abi.HTTPFetchParams
	if err := json.Unmarshal(p, &q); err != nil || q.URL == "" {
		return nil, abi.ErrBadParams
	}
	if h.HTTP == nil {
		return nil, abi.ErrDenied
	}
	if len(h.HTTPAllow) > 0 {
		allowed := false
		for _, prefix := range h.HTTPAllow {
			allowed = allowed || strings.HasPrefix(q.URL, prefix)
		}
		if !allowed {
			return nil, abi.ErrDenied
		}
	}
	var body io.Reader = http.NoBody
	switch {
	case q.BodyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*q.BodyBase64)
		if err != nil {
			return nil, abi.ErrBadParams
		}
		body = bytes.NewReader(b)
	case q.Body != nil:
		body = strings.NewReader(*q.Body)
	}
	req, err := http.NewRequest(q.Method, q.URL, body)
	if err != nil {
		return failed(-32000, err.Error())
	}
	for k, v := range q.Headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.HTTP.ServeHTTP(rec, req)
	res := map[string]any{"status": rec.Code}
	headers := map[string]string{}
	for k, v := range rec.Header() {
		headers[k] = strings.Join(v, ", ")
	}
	res["headers"] = headers
	if b := rec.Body.Bytes(); utf8.Valid(b) {
		res["body"] = string(b)
	} else {
		res["body_base64"] = base64.StdEncoding.EncodeToString(b)
	}
	return marshal(res)
}

func marshal(v any) ([]byte, int32) {
	b, err := json.Marshal(v)
	if err != nil {
		return failed(-32603, err.Error())
	}
	return b, 0
}

func failed(code int, msg string) ([]byte, int32) {
	b, _ := json.Marshal(map[string]any{"code": code, "message": msg})
	return b, abi.ErrFailed
}
