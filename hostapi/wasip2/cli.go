package wasip2

import (
	"context"
	"fmt"
	"slices"

	cm "github.com/wasmcp/wasmcp/internal/component"
)

// ExitError is the error of a call in which the component called
// wasi:cli/exit: the call ends there, and the instance with it.
type ExitError struct{ Code int }

func (e *ExitError) Error() string {
	return fmt.Sprintf("wasip2: the component exited with status %d", e.Code)
}

func cliFuncs() map[string]impl {
	const c = "wasi:cli/"
	none := func(ctx context.Context, st *State, args []any) (any, error) { return nil, nil }
	return map[string]impl{
		c + "environment#get-environment": func(ctx context.Context, st *State, args []any) (any, error) {
			keys := make([]string, 0, len(st.opts.Env))
			for k := range st.opts.Env {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i] = []any{k, st.opts.Env[k]}
			}
			return out, nil
		},
		c + "environment#get-arguments": func(ctx context.Context, st *State, args []any) (any, error) {
			out := make([]any, len(st.opts.Args))
			for i, a := range st.opts.Args {
				out[i] = a
			}
			return out, nil
		},
		c + "environment#initial-cwd": none,
		c + "exit#exit": func(ctx context.Context, st *State, args []any) (any, error) {
			v, err := arg(args, 0)
			if err != nil {
				return nil, err
			}
			code := 0
			if r, _ := v.(cm.ResultValue); r.Err {
				code = 1
			}
			return nil, &ExitError{Code: code}
		},
		c + "exit#exit-with-code": func(ctx context.Context, st *State, args []any) (any, error) {
			n, err := u64Arg(args, 0)
			if err != nil {
				return nil, err
			}
			return nil, &ExitError{Code: int(n & 0xff)}
		},
		c + "stdin#get-stdin": func(ctx context.Context, st *State, args []any) (any, error) {
			return st.add(&inStream{r: emptyReader{}})
		},
		c + "stdout#get-stdout": func(ctx context.Context, st *State, args []any) (any, error) {
			return st.add(&outStream{w: st.stdout})
		},
		c + "stderr#get-stderr": func(ctx context.Context, st *State, args []any) (any, error) {
			return st.add(&outStream{w: st.stderr})
		},
		c + "terminal-stdin#get-terminal-stdin":   none,
		c + "terminal-stdout#get-terminal-stdout": none,
		c + "terminal-stderr#get-terminal-stderr": none,
	}
}
