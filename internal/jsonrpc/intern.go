package jsonrpc

import (
	"bytes"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// knownMethods are method names decoded without allocating: the MCP
// methods and notifications of every protocol version.
var knownMethods = func() map[string]string {
	names := []string{
		"initialize", "notifications/initialized", "ping",
		"tools/list", "tools/call",
		"resources/list", "resources/templates/list", "resources/read",
		"resources/subscribe", "resources/unsubscribe",
		"prompts/list", "prompts/get", "completion/complete",
		"logging/setLevel", "server/discover", "subscriptions/listen",
		"notifications/cancelled", "notifications/progress", "notifications/message",
		"notifications/roots/list_changed", "notifications/tools/list_changed",
		"notifications/resources/list_changed", "notifications/prompts/list_changed",
		"notifications/resources/updated", "notifications/subscriptions/acknowledged",
		"notifications/elicitation/complete",
		"sampling/createMessage", "elicitation/create", "roots/list",
	}
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[n] = n
	}
	return m
}()

// internMethod decodes the method string literal v (valid JSON), returning
// a shared string for the known method names.
func internMethod(v []byte) string {
	if len(v) >= 2 && bytes.IndexByte(v, '\\') < 0 {
		if s, ok := knownMethods[string(v[1:len(v)-1])]; ok {
			return s
		}
	}
	s, _ := jsonscan.String(v)
	return s
}
