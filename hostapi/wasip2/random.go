package wasip2

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
)

// randomLen checks a random-bytes length: unlike a read, WASI wants
// exactly len bytes, so a length over MaxRead is a trap.
func (st *State) randomLen(args []any) (int, error) {
	n, err := u64Arg(args, 0)
	if err != nil {
		return 0, err
	}
	if n > uint64(st.lim.MaxRead) {
		return 0, fmt.Errorf("wasip2: %d random bytes asked for, over the %d of one call", n, st.lim.MaxRead)
	}
	return int(n), nil
}

func randomFuncs() map[string]impl {
	const r, i, s = "wasi:random/random#", "wasi:random/insecure#", "wasi:random/insecure-seed#"
	secure := func(st *State, n int) ([]byte, error) {
		b := make([]byte, n)
		if _, err := io.ReadFull(st.opts.Random, b); err != nil {
			return nil, fmt.Errorf("wasip2: random source: %w", err)
		}
		return b, nil
	}
	insecure := func(st *State, n int) []byte {
		b := make([]byte, n)
		st.mu.Lock()
		_, _ = st.insecure.Read(b)
		st.mu.Unlock()
		return b
	}
	return map[string]impl{
		r + "get-random-bytes": func(ctx context.Context, st *State, args []any) (any, error) {
			n, err := st.randomLen(args)
			if err != nil {
				return nil, err
			}
			return secure(st, n)
		},
		r + "get-random-u64": func(ctx context.Context, st *State, args []any) (any, error) {
			b, err := secure(st, 8)
			if err != nil {
				return nil, err
			}
			return binary.LittleEndian.Uint64(b), nil
		},
		i + "get-insecure-random-bytes": func(ctx context.Context, st *State, args []any) (any, error) {
			n, err := st.randomLen(args)
			if err != nil {
				return nil, err
			}
			return insecure(st, n), nil
		},
		i + "get-insecure-random-u64": func(ctx context.Context, st *State, args []any) (any, error) {
			return binary.LittleEndian.Uint64(insecure(st, 8)), nil
		},
		s + "insecure-seed": func(ctx context.Context, st *State, args []any) (any, error) {
			return []any{st.opts.InsecureSeed[0], st.opts.InsecureSeed[1]}, nil
		},
	}
}
