package wasip2

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	cm "github.com/wasmcp/wasmcp/internal/component"
)

// ioError is a wasi:io/error resource.
type ioError struct {
	msg  string
	code fsErr    // for a file's stream, its wasi:filesystem error-code
	http *cm.Case // for an HTTP body's stream, its wasi:http error-code
}

// pollable is a wasi:io/poll pollable: ready at a monotonic instant
// (timer), when done is closed, or always (neither).
type pollable struct {
	timer bool
	at    time.Duration // since State.start
	done  <-chan struct{}
}

func (p *pollable) ready(st *State) bool {
	switch {
	case p.timer:
		return st.mono() >= p.at
	case p.done != nil:
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	}
	return true
}

// mono is the monotonic clock: the time since New.
func (st *State) mono() time.Duration { return time.Since(st.start) }

// wait blocks until one of ps is ready, or ctx ends (an error: the
// guest's call is over).
func (st *State) wait(ctx context.Context, ps []*pollable) error {
	for {
		var earliest time.Duration = -1
		for _, p := range ps {
			if p.ready(st) {
				return nil
			}
			if p.timer && (earliest < 0 || p.at < earliest) {
				earliest = p.at
			}
		}
		cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}}
		if earliest >= 0 {
			t := time.NewTimer(earliest - st.mono())
			defer t.Stop()
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(t.C)})
		}
		for _, p := range ps {
			if p.done != nil {
				cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(p.done)})
			}
		}
		if i, _, _ := reflect.Select(cases); i == 0 {
			return fmt.Errorf("wasip2: waiting on a pollable: %w", context.Cause(ctx))
		}
	}
}

// newPollable makes p a resource.
func (st *State) newPollable(p *pollable) (any, error) {
	r, err := st.add(p)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// streamErr is a wasi:io/streams stream-error: closed, or the last
// operation failed with err.
type streamErr struct {
	closed bool
	err    error
}

var errClosed = &streamErr{closed: true}

func failed(err error) *streamErr { return &streamErr{err: err} }

// value returns e as a stream-error value, its error a new resource.
func (st *State) streamError(e *streamErr) (any, error) {
	if e.closed {
		return cm.Case{Name: "closed"}, nil
	}
	x := &ioError{msg: e.err.Error()}
	errors.As(e.err, &x.code)
	if he := (httpErr{}); errors.As(e.err, &he) {
		x.http = &he.code
	}
	r, err := st.add(x)
	if err != nil {
		return nil, err
	}
	return cm.Case{Name: "last-operation-failed", Value: r}, nil
}

// result returns v, or e as the err side of a result<_, stream-error>.
func (st *State) result(v any, e *streamErr) (any, error) {
	if e == nil {
		return ok(v), nil
	}
	ev, err := st.streamError(e)
	if err != nil {
		return nil, err
	}
	return fail(ev), nil
}

// writer is what an output-stream writes to. write gets at most the
// permit check-write gave.
type writer interface {
	write(b []byte) *streamErr
	flush() *streamErr
}

// reader is what an input-stream reads from. read returns at most n
// bytes, none (and no error) when nothing is ready yet; blockingRead
// waits for one byte at least.
type reader interface {
	read(n int) ([]byte, *streamErr)
	blockingRead(ctx context.Context, n int) ([]byte, *streamErr)
}

// outStream and inStream are the wasi:io/streams resources.
type outStream struct{ w writer }
type inStream struct{ r reader }

func (s *outStream) close() {
	if c, ok := s.w.(interface{ close() }); ok {
		c.close()
	}
}

func (s *inStream) close() {
	if c, ok := s.r.(interface{ close() }); ok {
		c.close()
	}
}

// emptyReader is stdin: always at its end.
type emptyReader struct{}

func (emptyReader) read(int) ([]byte, *streamErr) { return nil, errClosed }
func (emptyReader) blockingRead(context.Context, int) ([]byte, *streamErr) {
	return nil, errClosed
}

// readLen converts a guest's read length to a count within MaxRead.
func (st *State) readLen(n uint64) int {
	return int(min(n, uint64(st.lim.MaxRead)))
}

// checkWrite refuses a write over the permit.
func (st *State) checkWrite(n uint64) error {
	if n > uint64(st.lim.MaxWrite) {
		return fmt.Errorf("wasip2: a write of %d bytes, over the %d check-write permits", n, st.lim.MaxWrite)
	}
	return nil
}

var errEmptyPoll = errors.New("wasip2: poll of an empty list")

func ioFuncs() map[string]impl {
	const e, p, s = "wasi:io/error#", "wasi:io/poll#", "wasi:io/streams#"
	read := func(blocking bool) impl {
		return func(ctx context.Context, st *State, args []any) (any, error) {
			in, err := self[*inStream](st, args)
			if err != nil {
				return nil, err
			}
			n, err := u64Arg(args, 1)
			if err != nil {
				return nil, err
			}
			var b []byte
			var se *streamErr
			if blocking {
				b, se = in.r.blockingRead(ctx, st.readLen(n))
			} else {
				b, se = in.r.read(st.readLen(n))
			}
			if b == nil {
				b = []byte{}
			}
			return st.result(b, se)
		}
	}
	skip := func(blocking bool) impl {
		r := read(blocking)
		return func(ctx context.Context, st *State, args []any) (any, error) {
			v, err := r(ctx, st, args)
			if rv, isRes := v.(cm.ResultValue); err == nil && isRes && !rv.Err {
				return ok(uint64(len(rv.Value.([]byte)))), nil
			}
			return v, err
		}
	}
	write := func(flush bool, zeroes bool) impl {
		return func(ctx context.Context, st *State, args []any) (any, error) {
			out, err := self[*outStream](st, args)
			if err != nil {
				return nil, err
			}
			var b []byte
			if zeroes {
				n, err := u64Arg(args, 1)
				if err != nil {
					return nil, err
				}
				if err := st.checkWrite(n); err != nil {
					return nil, err
				}
				b = make([]byte, n)
			} else if b, err = bytesArg(args, 1); err != nil {
				return nil, err
			}
			if err := st.checkWrite(uint64(len(b))); err != nil {
				return nil, err
			}
			se := out.w.write(b)
			if se == nil && flush {
				se = out.w.flush()
			}
			return st.result(nil, se)
		}
	}
	flush := func(ctx context.Context, st *State, args []any) (any, error) {
		out, err := self[*outStream](st, args)
		if err != nil {
			return nil, err
		}
		return st.result(nil, out.w.flush())
	}
	splice := func(blocking bool) impl {
		return func(ctx context.Context, st *State, args []any) (any, error) {
			out, err := self[*outStream](st, args)
			if err != nil {
				return nil, err
			}
			r, err := repArg(args, 1)
			if err != nil {
				return nil, err
			}
			in, err := get[*inStream](st, r)
			if err != nil {
				return nil, err
			}
			n, err := u64Arg(args, 2)
			if err != nil {
				return nil, err
			}
			n = min(n, uint64(st.lim.MaxWrite))
			var b []byte
			var se *streamErr
			if blocking {
				b, se = in.r.blockingRead(ctx, int(n))
			} else {
				b, se = in.r.read(int(n))
			}
			if se == nil && len(b) > 0 {
				se = out.w.write(b)
			}
			return st.result(uint64(len(b)), se)
		}
	}
	return map[string]impl{
		e + "[method]error.to-debug-string": func(ctx context.Context, st *State, args []any) (any, error) {
			x, err := self[*ioError](st, args)
			if err != nil {
				return nil, err
			}
			return x.msg, nil
		},
		p + "[method]pollable.ready": func(ctx context.Context, st *State, args []any) (any, error) {
			x, err := self[*pollable](st, args)
			if err != nil {
				return nil, err
			}
			return x.ready(st), nil
		},
		p + "[method]pollable.block": func(ctx context.Context, st *State, args []any) (any, error) {
			x, err := self[*pollable](st, args)
			if err != nil {
				return nil, err
			}
			return nil, st.wait(ctx, []*pollable{x})
		},
		p + "poll": func(ctx context.Context, st *State, args []any) (any, error) {
			v, err := arg(args, 0)
			if err != nil {
				return nil, err
			}
			list, isList := v.([]any)
			if !isList {
				return nil, fmt.Errorf("wasip2: poll of a %T", v)
			}
			if len(list) == 0 {
				return nil, errEmptyPoll
			}
			ps := make([]*pollable, len(list))
			for i := range list {
				if ps[i], err = get[*pollable](st, asRep(list[i])); err != nil {
					return nil, err
				}
			}
			if err := st.wait(ctx, ps); err != nil {
				return nil, err
			}
			out := []any{}
			for i, x := range ps {
				if x.ready(st) {
					out = append(out, uint64(i))
				}
			}
			return out, nil
		},
		s + "[method]input-stream.read":                             read(false),
		s + "[method]input-stream.blocking-read":                    read(true),
		s + "[method]input-stream.skip":                             skip(false),
		s + "[method]input-stream.blocking-skip":                    skip(true),
		s + "[method]input-stream.subscribe":                        subscribeReady[*inStream](),
		s + "[method]output-stream.check-write":                     checkWrite,
		s + "[method]output-stream.write":                           write(false, false),
		s + "[method]output-stream.blocking-write-and-flush":        write(true, false),
		s + "[method]output-stream.flush":                           flush,
		s + "[method]output-stream.blocking-flush":                  flush,
		s + "[method]output-stream.subscribe":                       subscribeReady[*outStream](),
		s + "[method]output-stream.write-zeroes":                    write(false, true),
		s + "[method]output-stream.blocking-write-zeroes-and-flush": write(true, true),
		s + "[method]output-stream.splice":                          splice(false),
		s + "[method]output-stream.blocking-splice":                 splice(true),
	}
}

// checkWrite is output-stream.check-write: a write of MaxWrite bytes is
// always permitted (the log streams drop what is over their bounds).
func checkWrite(ctx context.Context, st *State, args []any) (any, error) {
	if _, err := self[*outStream](st, args); err != nil {
		return nil, err
	}
	return ok(uint64(st.lim.MaxWrite)), nil
}

// subscriber is a stream end that is not always ready.
type subscriber interface{ subscribe() *pollable }

// subscribeReady is a stream's subscribe: its own pollable if it has
// one, else one that is always ready.
func subscribeReady[T interface{ end() any }]() impl {
	return func(ctx context.Context, st *State, args []any) (any, error) {
		x, err := self[T](st, args)
		if err != nil {
			return nil, err
		}
		if s, ok := x.end().(subscriber); ok {
			return st.newPollable(s.subscribe())
		}
		return st.newPollable(&pollable{})
	}
}

func (s *outStream) end() any { return s.w }
func (s *inStream) end() any  { return s.r }

// asRep is a handle of a list, which canon lifts as its representation.
func asRep(v any) uint32 {
	r, _ := v.(uint32)
	return r // 0 is never a live representation
}
