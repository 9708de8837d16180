package mcp

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// batchWorkers bounds the goroutines that serve one batch: its requests
// run at most that many at once, whatever the batch's length.
const batchWorkers = 8

// batchTooLong refuses a batch of n messages when n is over the bound;
// nil otherwise.
func (s *Server) batchTooLong(n int) *jsonrpc.Error {
	if n <= s.opts.MaxBatch {
		return nil
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: "invalid request: batch of " + strconv.Itoa(n) + " messages; at most " + strconv.Itoa(s.opts.MaxBatch) + " per batch"}
}

// batchOverflow is the response of a request whose batch's responses
// already reached Options.MaxBatchBytes.
func (s *Server) batchOverflow() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: "invalid request: the batch's responses exceed " + strconv.Itoa(s.opts.MaxBatchBytes) + " bytes; send fewer requests per batch"}
}

// runBatch runs the calls of one batch, at most batchWorkers at once, and
// returns their responses in order. Once the responses reach
// Options.MaxBatchBytes, the calls not yet run are answered with an error
// instead, and so are the responses that would go past the bound.
func runBatch(s *Server, c *conn, calls []*call) [][]byte {
	out := make([][]byte, len(calls))
	var total, next atomic.Int64
	limit := int64(s.opts.MaxBatchBytes)
	var wg sync.WaitGroup
	for range min(len(calls), batchWorkers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(calls) {
					return
				}
				cl := calls[i]
				var resp []byte
				var ok bool
				if total.Load() >= limit {
					resp, _, ok = s.finish(cl, nil, s.batchOverflow(), nil)
				} else {
					res, err := s.invoke(cl)
					resp, _, ok = s.finish(cl, res, err, nil)
					if ok && total.Add(int64(len(resp))) > limit {
						resp = jsonrpc.AppendError(resp[:0], cl.id, s.batchOverflow())
					}
				}
				c.untrack(cl)
				if ok {
					out[i] = resp
				}
			}
		}()
	}
	wg.Wait()
	kept := out[:0]
	for _, r := range out {
		if r != nil {
			kept = append(kept, r)
		}
	}
	return kept
}
