package plugins

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wasmcp/wasmcp/internal/component"
)

// ErrComponentNotRunnable is returned for a plugin that is a WebAssembly
// component (Component Model, WASI 0.2): wasmcp reads, describes and
// maps components to tools (`wasmcp inspect`), but does not run them yet.
var ErrComponentNotRunnable = errors.New("components are not yet runnable")

// componentError is the load error of a component: what it exports and
// how many tools it would give, or why it cannot be decoded.
func componentError(wasm []byte) error {
	c, err := component.Decode(wasm)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrComponentNotRunnable, err)
	}
	return fmt.Errorf("%w: %s", ErrComponentNotRunnable, Summary(c.Describe()))
}

// Summary says in one line what a component's world exports and how many
// tools it maps to.
func Summary(w *component.World) string {
	names := make([]string, 0, len(w.Exports))
	for _, e := range w.Exports {
		if e.Type == nil {
			names = append(names, e.Name)
		}
	}
	tools, _ := w.Tools()
	if len(names) == 0 {
		return fmt.Sprintf("a component exporting no functions (%s)", count(len(w.Imports), "import"))
	}
	return fmt.Sprintf("a component exporting %s (%s, %s)", strings.Join(names, ", "), count(len(tools), "tool"), count(len(w.Imports), "import"))
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// ReadComponent reads the plugin file at path as a load reads it (a
// regular file of at most limit bytes; 0 means the default) and decodes
// it when it is a component. It returns nil and no error for a file that
// is not a component.
func ReadComponent(path string, limit uint64) (*component.Component, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	head := make([]byte, 8)
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || !component.IsComponent(head) {
		return nil, nil, nil
	}
	wasm, err := readModule(path, limit)
	if err != nil {
		return nil, nil, err
	}
	c, err := component.Decode(wasm)
	if err != nil {
		return nil, nil, err
	}
	return c, wasm, nil
}
