package plugins

import (
	"fmt"

	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// A plugin's result goes to the client as the plugin wrote it, so the host
// checks the members MCP requires of each result (a client SDK that
// decodes {"content":"nope"} fails on the whole response, not on one tool).
// Members the host does not know are left alone.

// resultShape holds the top-level members of a result that checkShape
// looks at (raw JSON, nil when absent).
type resultShape struct {
	content, contents, messages, completion, structured, isError []byte
}

// checkShape checks a complete (not input_required) result of method: a
// *BadResultError naming the first member that does not conform.
func checkShape(method string, s *resultShape) error {
	switch method {
	case abi.MethodToolsCall:
		if err := arrayOf("content", s.content, "type"); err != nil {
			return err
		}
		if s.structured != nil && jsonscan.Kind(s.structured) != 'o' && jsonscan.Kind(s.structured) != 'z' {
			return &BadResultError{Msg: "structuredContent is not an object"}
		}
		if s.isError != nil && jsonscan.Kind(s.isError) != 'b' {
			return &BadResultError{Msg: "isError is not a boolean"}
		}
	case abi.MethodResourceRead:
		return arrayOf("contents", s.contents, "uri")
	case abi.MethodPromptsGet:
		if err := arrayOf("messages", s.messages, "role"); err != nil {
			return err
		}
		it, _ := jsonscan.NewArrayIter(s.messages)
		for i := 0; ; i++ {
			m, ok := it.Next()
			if !ok {
				break
			}
			if c, _ := jsonscan.Member(m, "content"); jsonscan.Kind(c) != 'o' {
				return &BadResultError{Msg: fmt.Sprintf("messages[%d].content is not an object", i)}
			}
		}
	case abi.MethodComplete:
		if jsonscan.Kind(s.completion) != 'o' {
			return &BadResultError{Msg: "completion is missing or not an object"}
		}
		values, _ := jsonscan.Member(s.completion, "values")
		it, ok := jsonscan.NewArrayIter(values)
		if !ok {
			return &BadResultError{Msg: "completion.values is missing or not an array"}
		}
		for i := 0; ; i++ {
			v, ok := it.Next()
			if !ok {
				break
			}
			if jsonscan.Kind(v) != 's' {
				return &BadResultError{Msg: fmt.Sprintf("completion.values[%d] is not a string", i)}
			}
		}
	}
	return nil
}

// arrayOf checks that v (member name) is an array of objects that each
// have a string member key.
func arrayOf(name string, v []byte, key string) error {
	it, ok := jsonscan.NewArrayIter(v)
	if !ok {
		return &BadResultError{Msg: name + " is missing or not an array"}
	}
	for i := 0; ; i++ {
		e, ok := it.Next()
		if !ok {
			return nil
		}
		if jsonscan.Kind(e) != 'o' {
			return &BadResultError{Msg: fmt.Sprintf("%s[%d] is not an object", name, i)}
		}
		if k, _ := jsonscan.Member(e, key); jsonscan.Kind(k) != 's' {
			return &BadResultError{Msg: fmt.Sprintf("%s[%d].%s is missing or not a string", name, i, key)}
		}
	}
}
