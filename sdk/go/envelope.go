package wasmcp

import (
	"encoding/json"
	"strings"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// This file reads the request envelope without reflection. encoding/json
// costs tens of microseconds per call in a Go guest, and hundreds of
// milliseconds for a 1 MiB argument, where a byte loop costs a few. The
// scanner only takes what it can read exactly as json.Unmarshal would:
// anything unusual (a member of the wrong type, a key that differs from a
// field name only in case or needs unescaping, a duplicate member, invalid
// UTF-8) makes parseEnvelope report false, and HandleWith decodes the
// envelope with encoding/json instead, with its error messages. Raw
// members alias the envelope.

// envelopeFields are the members the scanner reads, by object; a key that
// folds to one of them without being equal goes to encoding/json.
var (
	topFields     = []string{"method", "params", "context"}
	contextFields = []string{"protocolVersion", "clientInfo", "clientCapabilities", "progressToken", "inputResponses", "requestState"}
	paramsFields  = []string{"name", "arguments", "uri", "ref", "argument", "context", "_meta", "inputResponses", "requestState"}
	refFields     = []string{"type", "name", "uri"}
	argFields     = []string{"name", "value"}
	implFields    = []string{"name", "title", "version"}
	pctxFields    = []string{"arguments"}
)

// parseEnvelope decodes envelope into env as json.Unmarshal would, and
// reports false when it cannot be sure to (see above).
func parseEnvelope(envelope []byte, env *requestEnvelope) bool {
	if !jsonscan.Valid(envelope) {
		return false
	}
	return scanObject(envelope, topFields, func(i int, v []byte) bool {
		switch i {
		case 0:
			return scanString(v, &env.Method)
		case 1:
			if jsonscan.Kind(v) == 'z' {
				return true
			}
			if env.Params == nil {
				env.Params = &requestParams{}
			}
			return scanParams(v, env.Params)
		default:
			return scanContext(v, env)
		}
	})
}

func scanContext(v []byte, env *requestEnvelope) bool {
	c := &env.Context
	return scanObject(v, contextFields, func(i int, v []byte) bool {
		switch i {
		case 0:
			return scanString(v, &c.ProtocolVersion)
		case 1:
			if jsonscan.Kind(v) == 'z' {
				return true
			}
			c.ClientInfo = &Implementation{}
			return scanImplementation(v, c.ClientInfo)
		case 2:
			c.ClientCapabilities = v
		case 3:
			c.ProgressToken = v
		case 4:
			return scanRawMap(v, &c.InputResponses)
		default:
			return scanOptString(v, &c.RequestState)
		}
		return true
	})
}

func scanParams(v []byte, p *requestParams) bool {
	return scanObject(v, paramsFields, func(i int, v []byte) bool {
		switch i {
		case 0:
			return scanString(v, &p.Name)
		case 1:
			p.Arguments = v
		case 2:
			return scanString(v, &p.URI)
		case 3:
			r := &p.Ref
			return scanObject(v, refFields, func(i int, v []byte) bool {
				return scanString(v, [...]*string{&r.Type, &r.Name, &r.URI}[i])
			})
		case 4:
			a := &p.Argument
			return scanObject(v, argFields, func(i int, v []byte) bool {
				return scanString(v, [...]*string{&a.Name, &a.Value}[i])
			})
		case 5:
			return scanObject(v, pctxFields, func(_ int, v []byte) bool {
				return scanStringMap(v, &p.Context.Arguments)
			})
		case 6:
			p.Meta = v
		case 7:
			return scanRawMap(v, &p.InputResponses)
		default:
			return scanOptString(v, &p.RequestState)
		}
		return true
	})
}

func scanImplementation(v []byte, impl *Implementation) bool {
	return scanObject(v, implFields, func(i int, v []byte) bool {
		return scanString(v, [...]*string{&impl.Name, &impl.Title, &impl.Version}[i])
	})
}

// scanObject calls member for each member of the JSON object v (valid
// JSON) whose key is one of fields, with the field's index; other keys
// are skipped. null is an empty object, as for a struct. It reports false
// if v is another type, a key may match a field only after unescaping or
// case folding, a field appears twice, or member returns false.
func scanObject(v []byte, fields []string, member func(i int, v []byte) bool) bool {
	if jsonscan.Kind(v) == 'z' {
		return true
	}
	it, ok := jsonscan.NewObjectIter(v)
	if !ok {
		return false
	}
	var seen uint64 // fields has 64 entries at most
	for {
		k, v, more := it.Next()
		if !more {
			return true
		}
		i := fieldIndex(k, fields)
		switch {
		case i == -1:
			continue
		case i < 0 || seen&(1<<i) != 0:
			return false
		}
		seen |= 1 << i
		if !member(i, v) {
			return false
		}
	}
}

// fieldIndex returns the index of raw key k in fields, -1 if it cannot
// match any (encoding/json matches keys case-insensitively), or -2 if it
// needs encoding/json to tell.
func fieldIndex(k []byte, fields []string) int {
	for i, f := range fields {
		if string(k) == f {
			return i
		}
	}
	for _, c := range k {
		if c == '\\' || c >= 0x80 {
			return -2
		}
	}
	for _, f := range fields {
		if strings.EqualFold(string(k), f) {
			return -2
		}
	}
	return -1
}

// scanString sets *s from the JSON string v; null leaves it unchanged.
func scanString(v []byte, s *string) bool {
	if jsonscan.Kind(v) == 'z' {
		return true
	}
	str, ok := plainString(v)
	if ok {
		*s = str
	}
	return ok
}

// scanOptString sets *s to the JSON string v, or to nil for null.
func scanOptString(v []byte, s **string) bool {
	if jsonscan.Kind(v) == 'z' {
		*s = nil
		return true
	}
	str, ok := plainString(v)
	if ok {
		*s = &str
	}
	return ok
}

// plainString decodes a JSON string literal that needs no unescaping; it
// reports false for other values and for strings with escapes, which
// encoding/json decodes.
func plainString(v []byte) (string, bool) {
	for len(v) > 0 && isSpace(v[len(v)-1]) {
		v = v[:len(v)-1]
	}
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	for _, c := range body {
		if c == '\\' {
			return "", false
		}
	}
	return string(body), true
}

// plainKey returns raw key k (from jsonscan.ObjectIter) as a string if it
// needs no unescaping.
func plainKey(k []byte) (string, bool) {
	for _, c := range k {
		if c == '\\' {
			return "", false
		}
	}
	return string(k), true
}

// scanRawMap sets *m to the members of the JSON object v (nil for null).
// Like encoding/json it adds to an existing map.
func scanRawMap(v []byte, m *map[string]json.RawMessage) bool {
	return scanMap(v, m, func(v []byte, out *json.RawMessage) bool {
		*out = v
		return true
	})
}

// scanStringMap sets *m to the JSON object of strings v (nil for null);
// a null member sets "", as in encoding/json.
func scanStringMap(v []byte, m *map[string]string) bool {
	return scanMap(v, m, scanString)
}

// scanMap sets *m to the JSON object v (nil for null), each member read
// by value; like encoding/json it adds to an existing map.
func scanMap[V any](v []byte, m *map[string]V, value func([]byte, *V) bool) bool {
	if jsonscan.Kind(v) == 'z' {
		*m = nil
		return true
	}
	it, ok := jsonscan.NewObjectIter(v)
	if !ok {
		return false
	}
	if *m == nil {
		*m = map[string]V{}
	}
	for {
		k, v, more := it.Next()
		if !more {
			return true
		}
		key, ok := plainKey(k)
		if !ok {
			return false
		}
		var x V
		if !value(v, &x) {
			return false
		}
		(*m)[key] = x
	}
}
