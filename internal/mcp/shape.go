package mcp

import (
	"fmt"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// A Provider's result goes to the client as the Provider wrote it, so the
// engine checks the members MCP requires of each result (a client SDK that
// decodes {"content":"nope"} fails on the whole response, not on one
// tool). Members the engine does not know are left alone.

// shapeKeys are the top-level members checkShape looks at; resultShape
// holds them in this order.
var shapeKeys = [...]string{"content", "contents", "messages", "completion", "structuredContent", "isError"}

const (
	shContent = iota
	shContents
	shMessages
	shCompletion
	shStructured
	shIsError
)

// resultShape holds the members of shapeKeys of a result (raw JSON, nil
// when absent).
type resultShape struct{ m [len(shapeKeys)][]byte }

// take records the member k: v of a result if checkShape looks at it.
func (s *resultShape) take(k, v []byte) {
	for i, name := range shapeKeys {
		if jsonscan.KeyIs(k, name) {
			s.m[i] = v
			return
		}
	}
}

// shapeError is a result that does not conform to its method's result
// type; its message names the first member that does not.
type shapeError string

func (e shapeError) Error() string { return "invalid result: " + string(e) }

// checkShape checks a complete (not input_required) result of method.
func checkShape(method string, s *resultShape) error {
	switch method {
	case methodToolsCall:
		if err := arrayOf("content", s.m[shContent], "type"); err != nil {
			return err
		}
		if s.m[shStructured] != nil && jsonscan.Kind(s.m[shStructured]) != 'o' && jsonscan.Kind(s.m[shStructured]) != 'z' {
			return shapeError("structuredContent is not an object")
		}
		if s.m[shIsError] != nil && jsonscan.Kind(s.m[shIsError]) != 'b' {
			return shapeError("isError is not a boolean")
		}
	case methodResRead:
		return arrayOf("contents", s.m[shContents], "uri")
	case methodPromptsGet:
		if err := arrayOf("messages", s.m[shMessages], "role"); err != nil {
			return err
		}
		it, _ := jsonscan.NewArrayIter(s.m[shMessages])
		for i := 0; ; i++ {
			m, ok := it.Next()
			if !ok {
				break
			}
			if c, _ := jsonscan.Member(m, "content"); jsonscan.Kind(c) != 'o' {
				return shapeError(fmt.Sprintf("messages[%d].content is not an object", i))
			}
		}
	case methodComplete:
		if jsonscan.Kind(s.m[shCompletion]) != 'o' {
			return shapeError("completion is missing or not an object")
		}
		values, _ := jsonscan.Member(s.m[shCompletion], "values")
		it, ok := jsonscan.NewArrayIter(values)
		if !ok {
			return shapeError("completion.values is missing or not an array")
		}
		for i := 0; ; i++ {
			v, ok := it.Next()
			if !ok {
				break
			}
			if jsonscan.Kind(v) != 's' {
				return shapeError(fmt.Sprintf("completion.values[%d] is not a string", i))
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
		return shapeError(name + " is missing or not an array")
	}
	for i := 0; ; i++ {
		e, ok := it.Next()
		if !ok {
			return nil
		}
		if jsonscan.Kind(e) != 'o' {
			return shapeError(fmt.Sprintf("%s[%d] is not an object", name, i))
		}
		if k, _ := jsonscan.Member(e, key); jsonscan.Kind(k) != 's' {
			return shapeError(fmt.Sprintf("%s[%d].%s is missing or not a string", name, i, key))
		}
	}
}
