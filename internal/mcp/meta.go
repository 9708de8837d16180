package mcp

import (
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// metaInfo is what the engine reads from a request's params and
// params._meta, in one pass over the top-level members.
type metaInfo struct {
	paramsObject bool // params is absent or an object

	hasMeta       bool   // params._meta is an object
	meta          []byte // ... that object
	modern        bool   // _meta carries a 2026-07-28 key
	version       string // io.modelcontextprotocol/protocolVersion
	hasVersion    bool   // ... present as a string
	caps          []byte // io.modelcontextprotocol/clientCapabilities
	hasCaps       bool   // ... present as an object
	clientInfo    []byte
	logLevel      string
	hasLogLevel   bool
	progressToken []byte
}

// scanMeta reads params (raw JSON, valid) into mi.
func scanMeta(params []byte, mi *metaInfo) {
	*mi = metaInfo{}
	if len(params) == 0 {
		mi.paramsObject = true
		return
	}
	it, ok := jsonscan.NewObjectIter(params)
	if !ok {
		return
	}
	mi.paramsObject = true
	var meta []byte
	for {
		k, v, more := it.Next()
		if !more {
			break
		}
		if jsonscan.KeyIs(k, "_meta") {
			meta = v
		}
	}
	mit, ok := jsonscan.NewObjectIter(meta)
	if !ok {
		return
	}
	mi.hasMeta, mi.meta = true, meta
	for {
		k, v, more := mit.Next()
		if !more {
			return
		}
		switch {
		case jsonscan.KeyIs(k, "progressToken"):
			if kind := jsonscan.Kind(v); kind == 's' || kind == 'n' {
				mi.progressToken = v
			}
		case jsonscan.KeyIs(k, metaProtocolVersion):
			mi.modern = true
			if jsonscan.StringIs(v, version20260728) {
				mi.version, mi.hasVersion = version20260728, true
			} else {
				mi.version, mi.hasVersion = jsonscan.String(v)
			}
		case jsonscan.KeyIs(k, metaClientCaps):
			mi.modern = true
			if jsonscan.Kind(v) == 'o' {
				mi.caps, mi.hasCaps = v, true
			}
		case jsonscan.KeyIs(k, metaClientInfo):
			if jsonscan.Kind(v) == 'o' {
				mi.clientInfo = v
			}
		case jsonscan.KeyIs(k, metaLogLevel):
			mi.logLevel, mi.hasLogLevel = jsonscan.String(v)
			if !mi.hasLogLevel {
				mi.logLevel, mi.hasLogLevel = "?", true // present but not a string: invalid
			}
		}
	}
}

// stringParam returns the string member name of params, if any.
func stringParam(params []byte, name string) (string, bool) {
	v, ok := jsonscan.Member(params, name)
	if !ok {
		return "", false
	}
	return jsonscan.String(v)
}
