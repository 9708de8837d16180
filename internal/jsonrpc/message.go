package jsonrpc

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// Message is one decoded JSON-RPC 2.0 message: a request (Method and ID),
// a notification (Method, no ID) or a response (ID with Result or Error).
//
// Params and Result alias the bytes that were parsed; copy them if they
// must outlive that buffer.
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// IsRequest reports whether m is a request (it expects a response).
func (m *Message) IsRequest() bool { return m.Method != "" && !m.ID.IsZero() }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID.IsZero() }

// IsResponse reports whether m is a response (result or error).
func (m *Message) IsResponse() bool { return m.Method == "" }

// IsBatch reports whether a frame holds a JSON-RPC batch (its first
// non-space byte is '[').
func IsBatch(frame []byte) bool {
	i := jsonscan.SkipSpace(frame, 0)
	return i < len(frame) && frame[i] == '['
}

// ParseBatch validates a batch frame and returns its elements, unparsed.
// It fails with CodeParseError for invalid JSON or UTF-8 and with
// CodeInvalidRequest for an empty array or a frame that is not an array.
func ParseBatch(frame []byte) ([]json.RawMessage, *Error) {
	if !jsonscan.Valid(frame) {
		return nil, &Error{Code: CodeParseError, Message: "parse error: invalid JSON"}
	}
	it, ok := jsonscan.NewArrayIter(frame)
	if !ok {
		return nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: not a batch"}
	}
	var out []json.RawMessage
	for {
		v, more := it.Next()
		if !more {
			break
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: empty batch"}
	}
	return out, nil
}

// member bits, to refuse duplicated members.
const (
	hasJSONRPC = 1 << iota
	hasID
	hasMethod
	hasParams
	hasResult
	hasError
)

// Parse decodes one message strictly:
//
//   - CodeParseError when data is not valid UTF-8 or not one JSON value;
//   - CodeInvalidRequest when it is JSON but not a JSON-RPC 2.0 message:
//     not an object, "jsonrpc" other than "2.0", an id that is null (except
//     in an error response), an object, an array or a boolean, a method
//     that is not a non-empty string, params that are neither an object nor
//     an array, a request that also has result/error, a response with both
//     or neither, a malformed error object, or a duplicated member.
//
// Member names are matched case-sensitively; unknown members are ignored.
// On CodeInvalidRequest the returned Message still carries the ID when one
// could be read, so the error response can echo it.
func Parse(data []byte) (Message, *Error) {
	if !jsonscan.Valid(data) {
		if !utf8.Valid(data) {
			return Message{}, &Error{Code: CodeParseError, Message: "parse error: invalid UTF-8"}
		}
		return Message{}, &Error{Code: CodeParseError, Message: "parse error: invalid JSON"}
	}
	return parseValid(data)
}

func invalid(m Message, why string) (Message, *Error) {
	return Message{ID: m.ID}, &Error{Code: CodeInvalidRequest, Message: "invalid request: " + why}
}

func parseValid(data []byte) (Message, *Error) {
	var m Message
	it, ok := jsonscan.NewObjectIter(data)
	if !ok {
		return invalid(m, "message is not a JSON object")
	}
	var seen int
	var why string
	nullID := false
	for {
		k, v, more := it.Next()
		if !more {
			break
		}
		var bit int
		switch {
		case jsonscan.KeyIs(k, "jsonrpc"):
			bit = hasJSONRPC
			if !jsonscan.StringIs(v, "2.0") && why == "" {
				why = `"jsonrpc" must be "2.0"`
			}
		case jsonscan.KeyIs(k, "id"):
			bit = hasID
			id, ok := parseID(v)
			switch {
			case ok:
				m.ID = id
			case string(v) == "null":
				nullID = true
			default:
				if why == "" {
					why = "id must be a string or a number"
				}
			}
		case jsonscan.KeyIs(k, "method"):
			bit = hasMethod
			if len(v) == 0 || v[0] != '"' {
				if why == "" {
					why = "method must be a string"
				}
				break
			}
			m.Method = internMethod(v)
			if m.Method == "" && why == "" {
				why = "method must not be empty"
			}
		case jsonscan.KeyIs(k, "params"):
			bit = hasParams
			if len(v) == 0 || (v[0] != '{' && v[0] != '[') {
				if why == "" {
					why = "params must be an object or an array"
				}
				break
			}
			m.Params = v
		case jsonscan.KeyIs(k, "result"):
			bit = hasResult
			m.Result = v
		case jsonscan.KeyIs(k, "error"):
			bit = hasError
			e, ok := parseErrorObject(v)
			if !ok {
				if why == "" {
					why = "malformed error object"
				}
				break
			}
			m.Error = e
		default:
			continue
		}
		if seen&bit != 0 && why == "" {
			why = "duplicated member " + string(k)
		}
		seen |= bit
	}
	switch {
	case why != "":
	case seen&hasJSONRPC == 0:
		why = `missing "jsonrpc": "2.0"`
	case seen&hasMethod != 0:
		if seen&(hasResult|hasError) != 0 {
			why = "a request cannot carry result or error"
		} else if nullID {
			why = "id must not be null"
		}
	case seen&(hasResult|hasError) == hasResult|hasError:
		why = "a response cannot carry both result and error"
	case seen&(hasResult|hasError) == 0:
		why = "missing method"
	case seen&hasID == 0:
		why = "a response needs an id"
	case nullID && seen&hasError == 0:
		why = "id must not be null"
	}
	if why != "" {
		return invalid(m, why)
	}
	return m, nil
}

// parseErrorObject reads {"code": int, "message": string, "data"?: any}.
func parseErrorObject(v []byte) (*Error, bool) {
	it, ok := jsonscan.NewObjectIter(v)
	if !ok {
		return nil, false
	}
	e := &Error{}
	var haveCode, haveMsg bool
	for {
		k, mv, more := it.Next()
		if !more {
			break
		}
		switch {
		case jsonscan.KeyIs(k, "code"):
			n, ok := parseInt(mv)
			if !ok {
				return nil, false
			}
			e.Code, haveCode = n, true
		case jsonscan.KeyIs(k, "message"):
			s, ok := jsonscan.String(mv)
			if !ok {
				return nil, false
			}
			e.Message, haveMsg = s, true
		case jsonscan.KeyIs(k, "data"):
			e.Data = json.RawMessage(mv)
		}
	}
	return e, haveCode && haveMsg
}

// parseInt reads a JSON integer that fits in an int.
func parseInt(v []byte) (int, bool) {
	if len(v) == 0 {
		return 0, false
	}
	neg := v[0] == '-'
	if neg {
		v = v[1:]
	}
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
