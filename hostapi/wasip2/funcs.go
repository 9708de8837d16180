package wasip2

import (
	"context"
	"fmt"
	"maps"
	"sync"

	cm "github.com/wasmcp/wasmcp/internal/component"
	"github.com/wasmcp/wasmcp/runtime/component"
)

// impl is a host function given its instance's State.
type impl func(ctx context.Context, st *State, args []any) (any, error)

var (
	tableOnce sync.Once
	table     map[string]component.Func
)

// Funcs returns the WASI 0.2 host functions, keyed "INSTANCE#NAME" with
// the instance's name unversioned ("wasi:cli/stdout#get-stdout"), so that
// they implement every 0.2.x version. The map is the caller's; each
// function finds its instance's State in the context (WithState).
func Funcs() map[string]component.Func {
	tableOnce.Do(func() {
		table = map[string]component.Func{}
		for _, group := range []map[string]impl{ioFuncs(), clockFuncs(), randomFuncs(), cliFuncs(), fsFuncs(), socketFuncs(), configFuncs(), httpFuncs()} {
			for name, f := range group {
				if _, dup := table[name]; dup {
					panic("wasip2: " + name + " defined twice")
				}
				table[name] = wrap(name, f)
			}
		}
	})
	return maps.Clone(table)
}

// Host returns a component.Host on Funcs and Drop, with list<u8> values
// as []byte.
func Host() *component.Host {
	return &component.Host{Funcs: Funcs(), Drop: Drop, ByteLists: true}
}

// wrap makes f a component.Func: it finds the State and turns a panic
// (a bug) into the guest call's error.
func wrap(name string, f impl) component.Func {
	return func(ctx context.Context, args []any) (res any, err error) {
		defer func() {
			if r := recover(); r != nil {
				res, err = nil, fmt.Errorf("wasip2: %s: host function failed: %v", name, r)
			}
		}()
		st, err := stateOf(ctx)
		if err != nil {
			return nil, err
		}
		return f(ctx, st, args)
	}
}

// Arguments, as canon lifts them: the checks are for the host's own
// mistakes (a signature wrong in the table) and for a component whose
// import types differ from WASI's, which canon cannot know of.

func arg(args []any, i int) (any, error) {
	if i >= len(args) {
		return nil, fmt.Errorf("wasip2: %d arguments, want at least %d", len(args), i+1)
	}
	return args[i], nil
}

func u64Arg(args []any, i int) (uint64, error) {
	v, err := arg(args, i)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case uint64:
		return x, nil
	case int64:
		return uint64(x), nil
	}
	return 0, fmt.Errorf("wasip2: argument %d is a %T, not an integer", i, v)
}

func repArg(args []any, i int) (uint32, error) {
	v, err := arg(args, i)
	if err != nil {
		return 0, err
	}
	if r, ok := v.(uint32); ok {
		return r, nil
	}
	return 0, fmt.Errorf("wasip2: argument %d is a %T, not a handle", i, v)
}

func stringArg(args []any, i int) (string, error) {
	v, err := arg(args, i)
	if err != nil {
		return "", err
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", fmt.Errorf("wasip2: argument %d is a %T, not a string", i, v)
}

func boolArg(args []any, i int) (bool, error) {
	v, err := arg(args, i)
	if err != nil {
		return false, err
	}
	if b, ok := v.(bool); ok {
		return b, nil
	}
	return false, fmt.Errorf("wasip2: argument %d is a %T, not a bool", i, v)
}

// bytesArg takes a list<u8>: a []byte (Host.ByteLists) or a []any of
// integers.
func bytesArg(args []any, i int) ([]byte, error) {
	v, err := arg(args, i)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case []byte:
		return x, nil
	case []any:
		b := make([]byte, len(x))
		for j, e := range x {
			n, ok := e.(uint64)
			if !ok || n > 255 {
				return nil, fmt.Errorf("wasip2: argument %d: element %d is not a u8", i, j)
			}
			b[j] = byte(n)
		}
		return b, nil
	}
	return nil, fmt.Errorf("wasip2: argument %d is a %T, not a list<u8>", i, v)
}

// self returns the resource of a method's self argument as a T.
func self[T any](st *State, args []any) (T, error) {
	r, err := repArg(args, 0)
	if err != nil {
		var zero T
		return zero, err
	}
	return get[T](st, r)
}

// ok and fail are the two sides of a result value.
func ok(v any) cm.ResultValue   { return cm.ResultValue{Value: v} }
func fail(v any) cm.ResultValue { return cm.ResultValue{Err: true, Value: v} }
