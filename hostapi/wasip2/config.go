package wasip2

import (
	"context"
	"slices"

	cm "github.com/wasmcp/wasmcp/internal/component"
)

// configFuncs is wasi:config/store (0.2.0-draft and 0.2.0-rc.1 have the
// same functions) on Options.Config. Its error variant is never
// returned: the map cannot fail.
func configFuncs() map[string]impl {
	const c = "wasi:config/store#"
	return map[string]impl{
		c + "get": func(ctx context.Context, st *State, args []any) (any, error) {
			k, err := stringArg(args, 0)
			if err != nil {
				return nil, err
			}
			if v, found := st.opts.Config[k]; found {
				return ok(cm.Some{Value: v}), nil
			}
			return ok(nil), nil
		},
		c + "get-all": func(ctx context.Context, st *State, args []any) (any, error) {
			keys := make([]string, 0, len(st.opts.Config))
			for k := range st.opts.Config {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i] = []any{k, st.opts.Config[k]}
			}
			return ok(out), nil
		},
	}
}
