// Package abi holds the constants of the wasmcp/1 plugin ABI (see ABI.md):
// the import module and function names, the entry points, the call status
// values, the host-call errno values and the envelope method names, and the
// params of the host calls that both sides encode or decode. It is a leaf
// package shared by the host (runtime, hostapi, plugins) and the guest
// SDKs, and imports nothing.
package abi

// Version is the ABI version a manifest declares in its "abi" field.
const Version = 1

// ImportModule is the module name of the wasmcp host functions.
const ImportModule = "wasmcp"

// WASIModule is the only other import module a plugin may use.
const WASIModule = "wasi_snapshot_preview1"

// Names of the host functions in ImportModule.
const (
	FuncInputLen    = "input_len"
	FuncInputRead   = "input_read"
	FuncOutputWrite = "output_write"
	FuncLog         = "log"
	FuncCall        = "call"
	FuncResultRead  = "result_read"
)

// Names of the plugin's exports.
const (
	ExportMemory     = "memory"
	ExportCall       = "wasmcp_call"
	ExportInitialize = "_initialize"
	ExportStart      = "_start"
)

// Status values returned by wasmcp_call.
const (
	StatusOK    = 0 // output holds the result JSON
	StatusError = 1 // output holds a JSON-RPC error object
)

// Errno values returned by the call import (always negative).
const (
	ErrDenied      = -1 // not granted
	ErrBadParams   = -2 // params are not valid for the method
	ErrCanceled    = -3 // cancelled or past the deadline; return at once
	ErrTooBig      = -4 // request or result over the size limit
	ErrFailed      = -5 // an error JSON {"code","message"} waits in result_read
	ErrUnsupported = -6 // the client or connection cannot do this
	ErrUnknown     = -7 // unknown method
)

// Envelope methods (the "method" field of the request envelope).
const (
	MethodDescribe     = "wasmcp/describe"
	MethodToolsCall    = "tools/call"
	MethodResourceRead = "resources/read"
	MethodPromptsGet   = "prompts/get"
	MethodComplete     = "completion/complete"
)

// Host-call methods (the method argument of the call import).
const (
	HostLog                  = "log"
	HostProgress             = "progress"
	HostNotifyListChanged    = "notify/list_changed"
	HostNotifyResourceUpdate = "notify/resource_updated"
	HostStreamClose          = "stream/close"
	HostTaskStart            = "task/start"
	HostConfigGet            = "config/get"
	HostHTTPFetch            = "http/fetch"
	HostKVGet                = "kv/get"
	HostKVSet                = "kv/set"
	HostKVDelete             = "kv/delete"
	HostKVList               = "kv/list"
	HostElicit               = "elicitation/create"
	HostSample               = "sampling/createMessage"
	HostRoots                = "roots/list"
)

// HTTPFetchParams are the params of the http/fetch host call: Method
// (empty means GET), URL, Headers, at most one of Body (UTF-8 text) and
// BodyBase64, and TimeoutMS (0 means the host's timeout). The guest SDK
// encodes them, hostapi and the SDK's test host decode them.
type HTTPFetchParams struct {
	Method     string            `json:"method"`
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers,omitempty"`
	Body       *string           `json:"body,omitempty"`
	BodyBase64 *string           `json:"body_base64,omitempty"`
	TimeoutMS  int64             `json:"timeout_ms,omitempty"`
}

// Log levels of the log import, in MCP (RFC 5424) order.
const (
	LevelDebug = iota
	LevelInfo
	LevelNotice
	LevelWarning
	LevelError
	LevelCritical
	LevelAlert
	LevelEmergency
)

var levelNames = [...]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// LevelName returns the MCP name of a log import level, clamping values out
// of range to the nearest valid level.
func LevelName(level int32) string {
	switch {
	case level < LevelDebug:
		level = LevelDebug
	case level > LevelEmergency:
		level = LevelEmergency
	}
	return levelNames[level]
}

// LevelValue returns the log import level of an MCP level name, and false
// for an unknown name.
func LevelValue(name string) (int32, bool) {
	for i, n := range levelNames {
		if n == name {
			return int32(i), true
		}
	}
	return 0, false
}
