package wasip2

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	cm "github.com/wasmcp/wasmcp/internal/component"
)

// Options configures the WASI view of one component instance. The zero
// value grants nothing: no environment, no files, no network, no
// configuration, output discarded.
type Options struct {
	// Stdout and Stderr receive the component's stdout and stderr, one
	// line per Write (without its newline), within the per-call bounds;
	// nil discards. They are the plugin's log, never the MCP stream.
	Stdout, Stderr io.Writer
	// Env is wasi:cli/environment's get-environment, sorted by name.
	Env map[string]string
	// Args is get-arguments.
	Args []string
	// Now is the wall clock (default time.Now). The monotonic clock is
	// always the process's, counted from New.
	Now func() time.Time
	// Random is wasi:random/random's source (default crypto/rand).
	Random io.Reader
	// InsecureSeed seeds wasi:random/insecure and is what insecure-seed
	// returns; zero means drawn from Random.
	InsecureSeed [2]uint64
	// Mounts are wasi:filesystem/preopens' directories.
	Mounts []Mount
	// HTTP sends wasi:http/outgoing-handler's requests; nil refuses them
	// all (see HTTPClient).
	HTTP HTTPClient
	// Config is wasi:config/store.
	Config map[string]string
	// Limits bound what one call may ask; zero fields take defaults.
	Limits Limits
}

// Mount is a preopened directory: Root seen at Guest.
type Mount struct {
	Root     *os.Root
	Guest    string
	ReadOnly bool
}

// Limits bound the host's work for one guest request. Zero fields take
// the defaults given.
type Limits struct {
	// MaxRead caps the bytes one read (a stream read, a file read, a
	// random-bytes request) returns (default 1 MiB); a longer request
	// gets fewer bytes where WASI allows that, else is a trap.
	MaxRead int
	// MaxWrite caps one write's bytes (default 64 KiB): check-write
	// permits it, a longer write is a trap.
	MaxWrite int
	// MaxHTTPBody caps an outgoing request's body and an incoming
	// response's, which are buffered whole (default 4 MiB; the
	// HTTPClient may cap them lower).
	MaxHTTPBody int
	// MaxResources caps the host resources alive at once (default 65536).
	MaxResources int
	// LogLines and LogLineText bound the stdout and stderr lines of one
	// call and the text of each (defaults hostapi.MaxLogLines and
	// hostapi.MaxLogLineText).
	LogLines, LogLineText int
}

func (l Limits) withDefaults() Limits {
	if l.MaxRead <= 0 {
		l.MaxRead = 1 << 20
	}
	if l.MaxWrite <= 0 {
		l.MaxWrite = 64 << 10
	}
	if l.MaxHTTPBody <= 0 {
		l.MaxHTTPBody = 4 << 20
	}
	if l.MaxResources <= 0 {
		l.MaxResources = 1 << 16
	}
	if l.LogLines <= 0 {
		l.LogLines = defaultLogLines
	}
	if l.LogLineText <= 0 {
		l.LogLineText = defaultLogLineText
	}
	return l
}

// State is the WASI state of one component instance: its options, the
// host resources its handles stand for, and its output. It serves one
// call at a time, as the instance does; Close may come from anywhere.
type State struct {
	opts     Options
	lim      Limits
	start    time.Time
	insecure *rand.ChaCha8
	stdout   *logStream
	stderr   *logStream
	mounts   []*mount

	mu     sync.Mutex
	res    map[uint32]any
	next   uint32
	closed bool
}

// New makes the State of one component instance.
func New(opts Options) *State {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Random == nil {
		opts.Random = crand.Reader
	}
	if opts.InsecureSeed == [2]uint64{} {
		var b [16]byte
		if _, err := io.ReadFull(opts.Random, b[:]); err != nil {
			_, _ = crand.Read(b[:])
		}
		opts.InsecureSeed = [2]uint64{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
	}
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:8], opts.InsecureSeed[0])
	binary.LittleEndian.PutUint64(seed[8:16], opts.InsecureSeed[1])
	st := &State{opts: opts, lim: opts.Limits.withDefaults(), start: time.Now(), insecure: rand.NewChaCha8(seed), res: map[uint32]any{}}
	st.stdout = newLogStream(opts.Stdout, st.lim)
	st.stderr = newLogStream(opts.Stderr, st.lim)
	for _, m := range opts.Mounts {
		st.mounts = append(st.mounts, newMount(m))
	}
	return st
}

type stateKey struct{}

// WithState returns ctx carrying st, for the calls of st's instance:
// the host functions find their instance's State there. It also starts
// a new call's output bounds, so use it once per call.
func WithState(ctx context.Context, st *State) context.Context {
	st.stdout.newCall()
	st.stderr.newCall()
	return context.WithValue(ctx, stateKey{}, st)
}

// errNoState is a host function called without WithState.
var errNoState = errors.New("wasip2: no WASI state in the call's context")

func stateOf(ctx context.Context) (*State, error) {
	st, _ := ctx.Value(stateKey{}).(*State)
	if st == nil {
		return nil, errNoState
	}
	return st, nil
}

// Drop is the Host.Drop of a component using these Funcs: it runs the
// destructor of the resource rep of the State in ctx.
func Drop(ctx context.Context, rt *cm.ResourceType, rep uint32) error {
	st, err := stateOf(ctx)
	if err != nil {
		return err
	}
	return st.Drop(ctx, rt, rep)
}

// Drop destroys host resource rep, whose last handle the guest dropped.
// A rep that is not live is an error (the guest's call traps).
func (st *State) Drop(_ context.Context, rt *cm.ResourceType, rep uint32) error {
	st.mu.Lock()
	r, ok := st.res[rep]
	if ok {
		delete(st.res, rep)
	}
	st.mu.Unlock()
	if !ok {
		return fmt.Errorf("wasip2: drop of %s %d, which is not live", resName(rt), rep)
	}
	if c, ok := r.(interface{ close() }); ok {
		c.close()
	}
	return nil
}

func resName(rt *cm.ResourceType) string {
	if rt == nil || rt.Name == "" {
		return "resource"
	}
	return rt.Name
}

// Close releases the State's resources (open files, HTTP bodies) and
// writes out the last unfinished output lines. The State must not be
// used after.
func (st *State) Close() error {
	st.mu.Lock()
	res := st.res
	st.res, st.closed = map[uint32]any{}, true
	st.mu.Unlock()
	for _, r := range res {
		if c, ok := r.(interface{ close() }); ok {
			c.close()
		}
	}
	st.stdout.flushPartial()
	st.stderr.flushPartial()
	return nil
}

// Dropped returns the stdout and stderr bytes dropped over the bounds
// since New.
func (st *State) Dropped() int64 { return st.stdout.droppedBytes() + st.stderr.droppedBytes() }

// Live returns the number of live host resources.
func (st *State) Live() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.res)
}

// add makes r a resource and returns its representation.
func (st *State) add(r any) (uint32, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return 0, errors.New("wasip2: the state is closed")
	}
	if len(st.res) >= st.lim.MaxResources {
		return 0, fmt.Errorf("wasip2: more than %d live host resources", st.lim.MaxResources)
	}
	for {
		st.next++
		if st.next == 0 {
			st.next = 1
		}
		if _, used := st.res[st.next]; !used {
			break
		}
	}
	st.res[st.next] = r
	return st.next, nil
}

// get returns resource rep as a T.
func get[T any](st *State, rep uint32) (T, error) {
	st.mu.Lock()
	r, ok := st.res[rep]
	st.mu.Unlock()
	t, isT := r.(T)
	if !ok || !isT {
		var zero T
		return zero, fmt.Errorf("wasip2: resource %d is not a live %s", rep, kindName[T]())
	}
	return t, nil
}

// take removes resource rep, a T, whose ownership the guest gave back
// (a static method taking an own handle, such as finish).
func take[T any](st *State, rep uint32) (T, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	r, ok := st.res[rep]
	t, isT := r.(T)
	if !ok || !isT {
		var zero T
		return zero, fmt.Errorf("wasip2: resource %d is not a live %s", rep, kindName[T]())
	}
	delete(st.res, rep)
	return t, nil
}

func kindName[T any]() string {
	var zero T
	return fmt.Sprintf("%T", zero)
}
