package wasmcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// Level is a log level, in MCP (RFC 5424) order.
type Level int32

// Log levels.
const (
	LevelDebug     Level = abi.LevelDebug
	LevelInfo      Level = abi.LevelInfo
	LevelNotice    Level = abi.LevelNotice
	LevelWarning   Level = abi.LevelWarning
	LevelError     Level = abi.LevelError
	LevelCritical  Level = abi.LevelCritical
	LevelAlert     Level = abi.LevelAlert
	LevelEmergency Level = abi.LevelEmergency
)

// String returns the MCP name of l, e.g. "warning".
func (l Level) String() string { return abi.LevelName(int32(l)) }

// Log sends a log line through the fast log import. The host forwards it
// to the client as notifications/message when the session's level allows,
// and to the server log.
func (c *Context) Log(level Level, msg string) {
	c.host.Log(int32(level), []byte(msg))
}

// Logf is Log with fmt.Sprintf formatting.
func (c *Context) Logf(level Level, format string, args ...any) {
	c.Log(level, fmt.Sprintf(format, args...))
}

// LogData sends a structured log message: data is any JSON-marshalable
// value and logger an optional name for its source.
func (c *Context) LogData(level Level, logger string, data any) error {
	return c.call(abi.HostLog, struct {
		Level  string `json:"level"`
		Logger string `json:"logger,omitempty"`
		Data   any    `json:"data"`
	}{level.String(), logger, data}, nil)
}

// Progress reports progress on the current request. total <= 0 means the
// total is unknown; message may be empty. progress must increase from
// call to call. Without a progress token from the client it does nothing.
func (c *Context) Progress(progress, total float64, message string) error {
	if c.ProgressToken == nil {
		return nil // the host would drop it: save the call
	}
	p := struct {
		Progress float64  `json:"progress"`
		Total    *float64 `json:"total,omitempty"`
		Message  string   `json:"message,omitempty"`
	}{Progress: progress, Message: message}
	if total > 0 {
		p.Total = &total
	}
	return c.call(abi.HostProgress, p, nil)
}

// ListKind names a list for [Context.NotifyListChanged].
type ListKind string

// The lists a plugin can change.
const (
	ListTools     ListKind = "tools"
	ListResources ListKind = "resources"
	ListPrompts   ListKind = "prompts"
)

// NotifyListChanged tells the host the plugin's list of kind changed: the
// host describes the plugin again and notifies clients.
func (c *Context) NotifyListChanged(kind ListKind) error {
	return c.call(abi.HostNotifyListChanged, map[string]string{"kind": string(kind)}, nil)
}

// NotifyResourceUpdated tells subscribed clients that the resource uri
// changed.
func (c *Context) NotifyResourceUpdated(uri string) error {
	return c.call(abi.HostNotifyResourceUpdate, map[string]string{"uri": uri}, nil)
}

// CloseStream asks the host to close the response stream that carries the
// current request, without ending the request: a long-running handler
// frees the client's HTTP connection (Streamable HTTP SSE polling), and
// the client reconnects to receive what follows, the result included.
// Where the request has no such stream (stdio, stateless HTTP) it does
// nothing. Progress and log notifications sent after it reach the client
// on the resumed stream.
func (c *Context) CloseStream() error {
	return c.call(abi.HostStreamClose, struct{}{}, nil)
}

// StartTask tells the host that the current call, running as a task
// (a tools/call of a tool whose TaskSupport is optional or required, from
// a 2026-07-28 client with the tasks extension), is under way: the client
// gets its task handle at once instead of after the host's start wait
// (500 ms) or the end of the call. Before it, an input_required result is
// answered to the client as it is, with no task (input gathered before
// the task starts); after it, input_required makes the task
// input_required until the client answers. Outside a task it does nothing.
func (c *Context) StartTask() error {
	return c.call(abi.HostTaskStart, struct{}{}, nil)
}

// ConfigGet returns the configuration value key that the operator granted
// the plugin; ErrDenied when it is not granted.
func (c *Context) ConfigGet(key string) (string, error) {
	var r struct {
		Value json.RawMessage `json:"value"`
	}
	if err := c.call(abi.HostConfigGet, map[string]string{"key": key}, &r); err != nil {
		return "", err
	}
	return jsonString(r.Value), nil
}

// jsonString returns a JSON string's value, or other JSON as text ("" for
// null or nothing).
func jsonString(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// HTTPRequest is a request for [Context.HTTPFetch].
type HTTPRequest struct {
	// Method is the HTTP method; empty means GET.
	Method string
	// URL must match a URL prefix the operator granted.
	URL string
	// Headers are request headers.
	Headers map[string]string
	// Body is the request body (sent as text when it is valid UTF-8,
	// base64 otherwise).
	Body []byte
	// Timeout bounds the request; zero means the host's default (and the
	// call's own deadline always applies).
	Timeout time.Duration
}

// HTTPResponse is the answer to an [HTTPRequest].
type HTTPResponse struct {
	// Status is the HTTP status code.
	Status int
	// Headers are the response headers; a repeated header's values are
	// joined with ", ". Use [HTTPResponse.Header] for a case-insensitive
	// lookup.
	Headers map[string]string
	// Body is the response body.
	Body []byte
}

// Header returns the value of the named header, ignoring case.
func (r *HTTPResponse) Header(name string) string {
	if v, ok := r.Headers[name]; ok {
		return v
	}
	for k, v := range r.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// HTTPFetch performs an HTTP request through the host. Only URLs the
// operator granted are reachable (ErrDenied otherwise); transport failures
// are a *HostError. A non-2xx status is not an error.
func (c *Context) HTTPFetch(req HTTPRequest) (*HTTPResponse, error) {
	method := req.Method
	if method == "" {
		method = "GET"
	}
	p := abi.HTTPFetchParams{Method: method, URL: req.URL, Headers: req.Headers, TimeoutMS: req.Timeout.Milliseconds()}
	if req.Body != nil {
		if utf8.Valid(req.Body) {
			s := string(req.Body)
			p.Body = &s
		} else {
			s := base64.StdEncoding.EncodeToString(req.Body)
			p.BodyBase64 = &s
		}
	}
	var r struct {
		Status     int                        `json:"status"`
		Headers    map[string]json.RawMessage `json:"headers"`
		Body       *string                    `json:"body"`
		BodyBase64 *string                    `json:"body_base64"`
	}
	if err := c.call(abi.HostHTTPFetch, p, &r); err != nil {
		return nil, err
	}
	resp := &HTTPResponse{Status: r.Status, Headers: make(map[string]string, len(r.Headers))}
	for k, v := range r.Headers {
		var list []string
		if json.Unmarshal(v, &list) == nil {
			resp.Headers[k] = strings.Join(list, ", ")
		} else {
			resp.Headers[k] = jsonString(v)
		}
	}
	switch {
	case r.BodyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*r.BodyBase64)
		if err != nil {
			return nil, fmt.Errorf("wasmcp: %s: invalid body_base64 from the host: %w", abi.HostHTTPFetch, err)
		}
		resp.Body = b
	case r.Body != nil:
		resp.Body = []byte(*r.Body)
	}
	return resp, nil
}

// KVGet returns the value stored under key and whether it exists.
func (c *Context) KVGet(key string) (value string, ok bool, err error) {
	var r struct {
		Value json.RawMessage `json:"value"`
	}
	if err := c.call(abi.HostKVGet, map[string]string{"key": key}, &r); err != nil {
		return "", false, err
	}
	if len(r.Value) == 0 || string(r.Value) == "null" {
		return "", false, nil
	}
	return jsonString(r.Value), true, nil
}

// KVSet stores value under key. ttl > 0 makes the entry expire after it
// (rounded up to whole seconds); zero keeps it until deleted.
func (c *Context) KVSet(key, value string, ttl time.Duration) error {
	p := struct {
		Key   string `json:"key"`
		Value string `json:"value"`
		TTL   int64  `json:"ttl_s,omitempty"`
	}{Key: key, Value: value}
	if ttl > 0 {
		p.TTL = int64((ttl + time.Second - 1) / time.Second)
	}
	return c.call(abi.HostKVSet, p, nil)
}

// KVDelete deletes key; deleting a missing key is not an error.
func (c *Context) KVDelete(key string) error {
	return c.call(abi.HostKVDelete, map[string]string{"key": key}, nil)
}

// KVList returns keys starting with prefix, one page at a time: pass the
// returned cursor to get the next page; an empty cursor means the last
// page.
func (c *Context) KVList(prefix, cursor string) (keys []string, next string, err error) {
	p := struct {
		Prefix string `json:"prefix"`
		Cursor string `json:"cursor,omitempty"`
	}{prefix, cursor}
	var r struct {
		Keys   []string `json:"keys"`
		Cursor string   `json:"cursor"`
	}
	if err := c.call(abi.HostKVList, p, &r); err != nil {
		return nil, "", err
	}
	return r.Keys, r.Cursor, nil
}

// KVListAll returns every key starting with prefix, following cursors.
func (c *Context) KVListAll(prefix string) ([]string, error) {
	var all []string
	cursor := ""
	for i := 0; i < 10000; i++ {
		keys, next, err := c.KVList(prefix, cursor)
		if err != nil {
			return all, err
		}
		all = append(all, keys...)
		if next == "" || next == cursor {
			return all, nil
		}
		cursor = next
	}
	return all, nil
}

// Elicit asks the user for input and waits for the answer (blocking
// elicitation/create). It works only on legacy sessions whose client
// declared elicitation, and needs the elicitation grant; otherwise it
// returns ErrUnsupported or ErrDenied. Prefer returning an
// [InputRequired] from the handler, which works on every protocol
// version.
func (c *Context) Elicit(p ElicitParams) (*ElicitResult, error) {
	var r ElicitResult
	if err := c.call(abi.HostElicit, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Sample asks the client's model for a completion and waits for it
// (blocking sampling/createMessage); see [Context.Elicit] for when it
// works.
func (c *Context) Sample(p SamplingParams) (*SamplingResult, error) {
	var r SamplingResult
	if err := c.call(abi.HostSample, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ListRoots asks the client for its roots and waits for them (blocking
// roots/list); see [Context.Elicit] for when it works.
func (c *Context) ListRoots() ([]Root, error) {
	var r struct {
		Roots []Root `json:"roots"`
	}
	if err := c.call(abi.HostRoots, struct{}{}, &r); err != nil {
		return nil, err
	}
	return r.Roots, nil
}
