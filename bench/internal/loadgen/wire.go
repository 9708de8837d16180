package loadgen

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Protocol versions the clients speak.
const (
	LegacyVersion = "2025-11-25"
	ModernVersion = "2026-07-28"
)

// Mode selects the protocol era of the requests.
type Mode string

// The modes.
const (
	Legacy Mode = "legacy" // initialize handshake, then plain requests
	Modern Mode = "modern" // no handshake; per-request _meta (2026-07-28)
)

// ParseMode parses "legacy" or "modern".
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case Legacy, Modern:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown mode %q (want legacy or modern)", s)
}

// modernMeta is the params._meta of every modern request.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + ModernVersion + `","io.modelcontextprotocol/clientCapabilities":{}}`

// echoText is the text sent with request id, so that a response can be
// checked against the request it answers.
func appendEchoText(b []byte, id int64) []byte {
	b = append(b, "bench-"...)
	return strconv.AppendInt(b, id, 10)
}

// appendCall appends the tools/call request with the given id, calling tool
// with {"text":"bench-<id>"}, without a trailing newline.
func appendCall(b []byte, mode Mode, tool string, id int64) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"name":`...)
	b = strconv.AppendQuote(b, tool)
	b = append(b, `,"arguments":{"text":"`...)
	b = appendEchoText(b, id)
	b = append(b, `"}`...)
	if mode == Modern {
		b = append(b, ',')
		b = append(b, modernMeta...)
	}
	return append(b, "}}"...)
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// callResponse is the part of a tools/call response the fast clients read.
type callResponse struct {
	ID     *int64 `json:"id"`
	Method string `json:"method"`
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *RPCError `json:"error"`
}

// check validates a decoded tools/call response against the request id it
// answers: a result with exactly one text block holding the text sent.
func (r *callResponse) check(id int64) error {
	switch {
	case r.Error != nil:
		return r.Error
	case r.Result == nil:
		return fmt.Errorf("response %d: no result", id)
	case r.Result.IsError:
		if len(r.Result.Content) > 0 {
			return fmt.Errorf("response %d: tool error: %s", id, r.Result.Content[0].Text)
		}
		return fmt.Errorf("response %d: tool error", id)
	case len(r.Result.Content) != 1 || r.Result.Content[0].Type != "text":
		return fmt.Errorf("response %d: want one text content block, got %d", id, len(r.Result.Content))
	}
	var buf [32]byte
	if want := appendEchoText(buf[:0], id); r.Result.Content[0].Text != string(want) {
		return fmt.Errorf("response %d: text %q, want %q", id, r.Result.Content[0].Text, want)
	}
	return nil
}
