package wasip2

import (
	"context"
	"math"
	"time"
)

// datetime is a wall-clock datetime record.
func datetime(t time.Time) map[string]any {
	sec, ns := t.Unix(), t.Nanosecond()
	if sec < 0 { // before 1970: WASI's datetime is unsigned
		sec, ns = 0, 0
	}
	return map[string]any{"seconds": uint64(sec), "nanoseconds": uint64(ns)}
}

func clockFuncs() map[string]impl {
	const w, m = "wasi:clocks/wall-clock#", "wasi:clocks/monotonic-clock#"
	return map[string]impl{
		w + "now": func(ctx context.Context, st *State, args []any) (any, error) {
			return datetime(st.opts.Now()), nil
		},
		w + "resolution": func(ctx context.Context, st *State, args []any) (any, error) {
			return map[string]any{"seconds": uint64(0), "nanoseconds": uint64(1)}, nil
		},
		m + "now": func(ctx context.Context, st *State, args []any) (any, error) {
			return uint64(st.mono()), nil
		},
		m + "resolution": func(ctx context.Context, st *State, args []any) (any, error) {
			return uint64(1), nil
		},
		m + "subscribe-instant": func(ctx context.Context, st *State, args []any) (any, error) {
			when, err := u64Arg(args, 0)
			if err != nil {
				return nil, err
			}
			return st.newPollable(&pollable{timer: true, at: duration(when)})
		},
		m + "subscribe-duration": func(ctx context.Context, st *State, args []any) (any, error) {
			d, err := u64Arg(args, 0)
			if err != nil {
				return nil, err
			}
			now := st.mono()
			at := now + duration(d)
			if at < now {
				at = math.MaxInt64 // never, in practice: the call's deadline comes first
			}
			return st.newPollable(&pollable{timer: true, at: at})
		},
	}
}

// duration converts nanoseconds, saturating.
func duration(ns uint64) time.Duration {
	if ns > math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
