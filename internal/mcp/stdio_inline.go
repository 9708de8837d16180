package mcp

import (
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// A stdio connection's reader runs a request itself ("inline") instead of
// handing it to a worker when it expects the request to be quick. Handing
// a request over costs a goroutine wake-up on each side and lets the
// scheduler move work between threads; for a call of a few microseconds
// that is a large part of its cost, and a client that pipelines quick
// calls gets them answered in order by one goroutine, as a single-threaded
// server would. Requests that take longer run on workers, in parallel.
//
// What the reader expects of a request comes from its target (method and
// tool, prompt or resource): a moving average of the time its requests
// took, inline or on workers. A target averaging more than inlineMax goes
// to workers; a new one is tried inline.
//
// The reader must never be stuck behind a slow request: input carries the
// cancellations and the answers to the server's own requests. A watchdog
// goroutine looks at the reader every inlineTick while it runs a request
// inline; a request it finds running on two looks in a row (so after one
// to two ticks) loses the reader role: the watchdog starts a new reader
// on the same input, and the old goroutine finishes the request as a
// worker would and exits. Its target then goes to workers for a while
// whatever its average: slowFor at first, twice as long on each strike
// that soon follows, up to slowForMax. The watchdog sleeps while the
// reader runs nothing inline and costs no wake-ups when the connection is
// idle.
//
// Streams (subscriptions/listen), batches and the last line before end of
// input or a read error never run inline.

// inlineMax is the longest average run time of a target whose requests
// the reader runs inline (a variable for tests, which run slower under
// the race detector).
var inlineMax = 30 * time.Microsecond

const (
	// inlineTick is how often the watchdog looks at a request running
	// inline: the reader is taken over after one to two ticks.
	inlineTick = time.Millisecond
	// slowFor is how long a target stays off the inline path after it
	// was first taken over; each strike doubles it, up to slowForMax. A
	// strike that comes more than forgetAfter periods after the last one
	// ended counts as a first one: a pause of the whole process (a
	// collection, the machine) can make a quick request look slow.
	slowFor     = 100 * time.Millisecond
	slowForMax  = time.Minute
	forgetAfter = 10
	// maxTargets bounds the targets a connection remembers (the names
	// come from the client); the memory is cleared when it is full.
	// maxTargetKey bounds the length of a target it remembers apart.
	maxTargets   = 256
	maxTargetKey = 256
)

// The states of stdioConn.inl, in its low two bits; the rest counts
// inline runs, so that the watchdog tells one long run from two short
// ones.
const (
	inlIdle    = 0
	inlRunning = 1
	inlTaken   = 2
	inlMask    = 3
)

// targetName returns the part of a target that r's params name: the tool
// or prompt name or resource URI, as its raw JSON string (escapes not
// decoded; nil for none). The params are not parsed yet when the reader
// looks (serve parses them): the first member of that name counts.
func targetName(r *Request) []byte {
	var key string
	switch r.Method {
	case methodToolsCall, methodPromptsGet:
		key = "name"
	case methodResRead:
		key = "uri"
	default:
		return nil
	}
	it, _ := jsonscan.NewObjectIter(r.Params)
	for k, v, more := it.Next(); more; k, v, more = it.Next() {
		if jsonscan.KeyIs(k, key) {
			if len(v) >= 2 && v[0] == '"' {
				return v[1 : len(v)-1]
			}
			return nil
		}
	}
	return nil
}

// target is what a connection knows of the requests to one target.
type target struct {
	avg atomic.Int64 // moving average of their run times, in ns
	off atomic.Int64 // until when (Unix ns) they go to workers; 0: no strike yet

	// The watchdog's (strike).
	period  time.Duration // the last time off
	strikes int
}

// ran adds a run of d to t's average, which moves an eighth of the way.
// Runs on workers may race to update it: one of them is lost.
func (t *target) ran(d time.Duration) {
	a := t.avg.Load()
	t.avg.Store(a + (int64(d)-a)/8)
}

// inlineAt reports whether a request to t may run inline at now (Unix
// ns), which it reads only for a target that was ever struck.
func (t *target) inlineAt(now func() int64) bool {
	if t.avg.Load() > int64(inlineMax) {
		return false
	}
	off := t.off.Load()
	return off == 0 || now() >= off
}

func unixNow() int64 { return time.Now().UnixNano() }

// strike sends t to workers for a while from now: the watchdog took one
// of its runs over.
func (t *target) strike(now time.Time) {
	if t.strikes > 0 && now.UnixNano()-t.off.Load() > int64(forgetAfter*t.period) {
		t.strikes = 0 // an old strike: a pause of the machine, not of the target
	}
	t.period = min(slowFor<<min(t.strikes, 10), slowForMax)
	t.off.Store(now.Add(t.period).UnixNano())
	t.strikes++
}

// inliner is a stdio connection's inline state (part of stdioConn).
type inliner struct {
	inl     atomic.Uint64 // inline run count << 2 | state
	inlT    *target       // the target of the run in inl; read by the watchdog once it took the run
	watchOn atomic.Bool   // the watchdog is looking (not parked)
	wake    chan struct{} // a token for a parked watchdog (capacity 1)

	// The reader's: one goroutine at a time, handed on with the role.
	targets map[string]*target // by method, a zero byte, and targetName
	long    target             // the record of the targets too long for targets
	key     []byte             // targetOf's
}

// targetOf returns the connection's record of r's target, making it if
// needed. Targets longer than maxTargetKey share one record, so that the
// names a client makes up cost at most maxTargets*maxTargetKey bytes.
func (st *stdioConn) targetOf(r *Request) *target {
	name := targetName(r)
	if len(r.Method)+1+len(name) > maxTargetKey {
		return &st.long
	}
	k := append(append(append(st.key[:0], r.Method...), 0), name...)
	st.key = k
	if t := st.targets[string(k)]; t != nil {
		return t
	}
	if st.targets == nil || len(st.targets) >= maxTargets {
		st.targets = map[string]*target{}
	}
	t := &target{}
	st.targets[string(k)] = t
	return t
}

// runInline runs j on the reader; it reports whether the reader role was
// taken over meanwhile, in which case the calling goroutine must stop
// reading.
func (st *stdioConn) runInline(j stdioJob) (taken bool) {
	run := (st.inl.Load()&^inlMask + 1<<2) | inlRunning
	st.inlT = j.t
	st.inl.Store(run)
	if !st.watchOn.Load() && st.watchOn.CompareAndSwap(false, true) {
		st.wake <- struct{}{}
	}
	t0 := time.Now()
	st.serve(j.cl)
	taken = !st.inl.CompareAndSwap(run, run&^inlMask)
	j.t.ran(time.Since(t0))
	putBuf(j.buf)
	st.release()
	return taken
}

// watchdog takes the reader role away from requests that run inline too
// long; it returns when the connection ends (quit).
func (st *stdioConn) watchdog() {
	defer st.workers.Done()
	t := time.NewTimer(inlineTick)
	defer t.Stop()
	t.Stop()
	for {
		// Parked: wait until the reader runs something inline.
		select {
		case <-st.wake:
		case <-st.quit:
			return
		}
		last := st.inl.Load()
		for idle := 0; idle < 2; {
			t.Reset(inlineTick)
			select {
			case <-t.C:
			case <-st.quit:
				return
			}
			v := st.inl.Load()
			switch {
			case v&inlMask == inlRunning && v == last:
				if st.inl.CompareAndSwap(v, v&^inlMask|inlTaken) {
					// The run is ours now: the reader does not start
					// another (and write inlT) until the new one does.
					st.inlT.strike(time.Now())
					go st.read()
					// What the old reader held goes out now; from
					// another goroutine, as a client that does not read
					// must not stop the watchdog.
					go st.lw.unhold()
				}
				idle = 0
			case v == last:
				idle++
			default:
				idle = 0
			}
			last = v
		}
		// Two quiet ticks: park, unless a run started meanwhile.
		st.watchOn.Store(false)
		if st.inl.Load()&inlMask == inlRunning && st.watchOn.CompareAndSwap(false, true) {
			st.wake <- struct{}{} // to ourselves
		}
	}
}

// holdMax bounds the messages the reader handles in a row while it holds
// the output.
const holdMax = 4

// holder holds the connection's output while the reader handles input
// that is already buffered, so that the answers to requests a client
// sent together go out together, in one write instead of one each: a
// pipelining client then reads them with one wake-up. At most holdMax
// answers wait for a write, so that a client with many requests in
// flight gets answers while the reader goes on; and nothing is held
// across a wait: the output goes out when no further line is buffered,
// before the reader waits for a run slot (acquireOut), and when the
// watchdog takes the reader role over. Workers' answers wait with the
// reader's. Each reader has a holder of its own.
type holder struct {
	n  int  // messages handled since the held output was last written
	on bool // the output is held
}

// before is called by the reader before it handles a line, with whether
// another line is buffered after it; after, once it handled it.
func (h *holder) before(st *stdioConn, more bool) {
	if !more {
		return
	}
	if !h.on {
		st.lw.hold()
		h.on = true
	}
	if h.n++; h.n > holdMax {
		st.lw.writeHeld()
		h.n = 1
	}
}

func (h *holder) after(st *stdioConn, more bool) {
	if !more && h.on {
		st.lw.unhold()
		h.on, h.n = false, 0
	}
}
