package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// hasParsedParams reports whether the engine parses the params of method
// into Request.Parsed before the Provider sees them.
func hasParsedParams(method string) bool {
	switch method {
	case methodToolsCall, methodPromptsGet, methodResRead, methodComplete:
		return true
	}
	return false
}

// ParseParams sets r.Parsed from r.Params, as the engine does before it
// calls a Provider's CallTool, GetPrompt, ReadResource or Complete: the
// one place where the params of those methods are read. It fails with a
// -32602 *jsonrpc.Error naming the member that is malformed. Code that
// runs a Provider without the engine (the wasmcp call command) calls it
// itself.
func (r *Request) ParseParams() error {
	if e := parseParams(r); e != nil {
		return e
	}
	return nil
}

// parseParams reads the members of r.Params (valid JSON) that tools/call,
// prompts/get, resources/read and completion/complete carry, without
// reflection, checks their types, then the members r.Method requires.
func parseParams(r *Request) *jsonrpc.Error {
	p := &r.Parsed
	*p = mcpreq.Params{}
	it, _ := jsonscan.NewObjectIter(r.Params) // an object: serveFeature checked
	var args []byte
	var ref refParam
	for k, v, more := it.Next(); more; k, v, more = it.Next() {
		var e *jsonrpc.Error
		switch {
		case jsonscan.KeyIs(k, "name"):
			p.Name, e = stringMember("name", v)
		case jsonscan.KeyIs(k, "uri"):
			p.URI, e = stringMember("uri", v)
		case jsonscan.KeyIs(k, "arguments"):
			args = v
		case jsonscan.KeyIs(k, "inputResponses"):
			p.InputResponses = v
		case jsonscan.KeyIs(k, "requestState"):
			p.RequestState = nil
			if jsonscan.Kind(v) != 'z' {
				var st string
				st, e = stringMember("requestState", v)
				p.RequestState = &st
			}
		case jsonscan.KeyIs(k, "ref"):
			ref, e = parseRef(v)
		}
		if e != nil {
			return e
		}
	}
	nullArgs := len(args) == 0 || jsonscan.Kind(args) == 'z'
	switch r.Method {
	case methodToolsCall:
		switch {
		case p.Name == "":
			return invalidParams("tools/call needs a tool name")
		case nullArgs:
			p.Arguments = emptyObject
		case jsonscan.Kind(args) != 'o':
			return invalidParams("tools/call arguments must be an object")
		default:
			p.Arguments = args
		}
	case methodPromptsGet:
		switch {
		case p.Name == "":
			return invalidParams("prompts/get needs a prompt name")
		case !nullArgs && jsonscan.Kind(args) != 'o':
			return invalidParams("prompts/get arguments must be an object of strings")
		case !nullArgs:
			p.Arguments = args
		}
	case methodResRead:
		if p.URI == "" {
			return invalidParams("resources/read needs a uri")
		}
	case methodComplete:
		if ref != nil {
			if ref.Type != "ref/prompt" && ref.Type != "ref/resource" {
				return invalidParams(fmt.Sprintf("unknown completion ref type %q", ref.Type))
			}
			p.Ref = mcpreq.Ref{Type: ref.Type, Name: ref.Name, URI: ref.URI}
		}
	}
	return nil
}

var emptyObject = json.RawMessage("{}")

func stringMember(key string, v []byte) (string, *jsonrpc.Error) {
	s, ok := jsonscan.String(v)
	if !ok {
		return "", invalidParams("params." + key + " must be a string")
	}
	return s, nil
}

// refParam is params.ref as decoded (nil when absent or null).
type refParam *struct {
	Type string `json:"type"`
	Name string `json:"name"`
	URI  string `json:"uri"`
}

// parseRef decodes params.ref, for every method (a malformed ref is
// refused whatever the method).
func parseRef(v []byte) (refParam, *jsonrpc.Error) {
	var r refParam
	if err := json.Unmarshal(v, &r); err != nil {
		return nil, invalidParams("invalid params.ref: " + err.Error())
	}
	return r, nil
}
