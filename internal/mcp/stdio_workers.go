package mcp

import "time"

// A stdio connection runs the requests its reader does not run itself
// (stdio_inline.go: the ones not expected to be quick, and the ones taken
// over from the reader) on long-lived worker goroutines rather than on a
// new goroutine each. A new goroutine starts with a small
// stack, and a request's JSON decoding and validation recurse deep enough
// to grow it by copying every time; a worker's stack stays grown from one
// request to the next.
//
// The reader hands a request to a worker only after taking a slot of the
// connection (stdioConn.acquire), so the slots still bound the requests
// running. A worker marks itself idle before it gives its slot back: a
// reader that gets the slot then finds the worker and waits only for it
// to reach its receive, instead of starting another goroutine. A request
// waiting for the client gives its slot back while it holds its worker,
// so a connection has as many workers as it had requests running or
// waiting at once; idle workers beyond MaxConcurrency exit, and all of
// them exit when ServeStdio returns.

// stdioJob is one request for a worker: the call and the buffer holding
// its message, which the worker gives back once the request is done.
type stdioJob struct {
	cl  *call
	buf *[]byte
	t   *target // its target, whose average it updates (stdio_inline.go); nil for none
}

// dispatch runs j on an idle worker, or on a new one if none is idle. The
// caller holds a slot and has registered the request in st.wg.
func (st *stdioConn) dispatch(j stdioJob) {
	for n := st.idle.Load(); n > 0; n = st.idle.Load() {
		if st.idle.CompareAndSwap(n, n-1) {
			// The worker counted in idle receives: it leaves only when
			// quit is closed, after every request registered in st.wg
			// (this one included) is done.
			st.jobs <- j
			return
		}
	}
	st.workers.Add(1)
	go st.work(j)
}

// work runs j, then the requests dispatched to it until the connection
// ends or enough other workers are idle.
func (st *stdioConn) work(j stdioJob) {
	defer st.workers.Done()
	for {
		st.run(j)
		if !st.park() {
			st.release()
			return
		}
		st.release()
		select {
		case j = <-st.jobs:
		case <-st.quit:
			return
		}
	}
}

// park counts the calling worker as idle unless MaxConcurrency workers
// already are; it reports whether it did.
func (st *stdioConn) park() bool {
	limit := int32(st.srv.opts.MaxConcurrency)
	for {
		n := st.idle.Load()
		if n >= limit {
			return false
		}
		if st.idle.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// run serves one request and writes its response; the worker gives the
// request's slot back afterwards.
func (st *stdioConn) run(j stdioJob) {
	if j.t == nil {
		st.serve(j.cl)
	} else {
		t0 := time.Now()
		st.serve(j.cl)
		j.t.ran(time.Since(t0))
	}
	putBuf(j.buf)
}

// serve serves cl and writes its response, leaving the buffer holding
// its message to the caller.
func (st *stdioConn) serve(cl *call) {
	defer st.wg.Done()
	out := getBuf()
	resp, _, ok := st.srv.serveTracked(cl, st.c, nil, (*out)[:0])
	if ok {
		_ = st.lw.writeMsg(resp)
	}
	*out = resp
	putBuf(out)
}
