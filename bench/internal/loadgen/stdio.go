package loadgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// StdioClient is a closed-loop MCP client on a server's stdio. One
// goroutine does everything: it keeps InFlight requests outstanding,
// sending the next request as soon as a response arrives, and flushes its
// writes just before it would block reading, so requests that become ready
// together go out in one write, as a pipelining client's would.
type StdioClient struct {
	br     *bufio.Reader
	bw     *bufio.Writer
	mode   Mode
	tool   string
	nextID int64
	long   []byte
}

// NewStdioClient returns a client that reads the server's responses from r
// and writes requests to w, calling tool in the given mode.
func NewStdioClient(r io.Reader, w io.Writer, mode Mode, tool string) *StdioClient {
	return &StdioClient{
		br:   bufio.NewReaderSize(r, 64<<10),
		bw:   bufio.NewWriterSize(w, 64<<10),
		mode: mode,
		tool: tool,
	}
}

// readLine returns the next non-empty line, valid until the next call.
func (c *StdioClient) readLine() ([]byte, error) {
	for {
		line, err := c.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			c.long = append(c.long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = c.br.ReadSlice('\n')
				c.long = append(c.long, line...)
			}
			line = c.long
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line, nil
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("reading server output: %w", err)
		}
	}
}

// Handshake prepares the session: in legacy mode it sends initialize
// (2025-11-25), checks the answer and sends notifications/initialized; in
// modern mode there is nothing to do.
func (c *StdioClient) Handshake() error {
	if c.mode != Legacy {
		return nil
	}
	c.nextID++
	id := c.nextID
	fmt.Fprintf(c.bw, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"wasmcp-bench","version":"1.0.0"}}}`+"\n", id, LegacyVersion)
	if err := c.bw.Flush(); err != nil {
		return err
	}
	for {
		line, err := c.readLine()
		if err != nil {
			return err
		}
		var r struct {
			ID     *int64 `json:"id"`
			Result *struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
			Error *RPCError `json:"error"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("initialize: bad response %q: %v", line, err)
		}
		if r.ID == nil || *r.ID != id {
			continue // a notification
		}
		if r.Error != nil {
			return fmt.Errorf("initialize: %w", r.Error)
		}
		if r.Result == nil || r.Result.ProtocolVersion != LegacyVersion {
			return fmt.Errorf("initialize: unexpected result %s", line)
		}
		break
	}
	c.bw.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	return c.bw.Flush()
}

// RunOptions bound a closed-loop run.
type RunOptions struct {
	// InFlight is how many requests are kept outstanding (default 8, at
	// most 256 so that requests in flight always fit in the pipes).
	InFlight int
	// Warmup is run first and not measured.
	Warmup time.Duration
	// Duration is the length of the measured window.
	Duration time.Duration
	// Count, if positive, ends the measured window after this many calls
	// (or Duration, whichever comes first).
	Count int
	// ServerCPU, if set, returns the CPU time the server process has used
	// so far; it is read at both ends of the measured window.
	ServerCPU func() (time.Duration, error)
}

// Run keeps o.InFlight tools/call requests in flight, validating every
// response, until the measured window ends; then it waits for the
// outstanding responses and returns the measurements. Invalid responses are
// counted in Result.Errors and the first is returned in Result.FirstError.
func (c *StdioClient) Run(o RunOptions) (*Result, error) {
	n := o.InFlight
	if n <= 0 {
		n = 8
	}
	if n > 256 {
		return nil, errors.New("at most 256 requests in flight on stdio")
	}
	// Send times of the requests in flight, by id (set when flushed).
	// Responses may come in any order, so a request can stay in flight
	// while thousands of later ones complete.
	inflight := make(map[int64]time.Duration, 2*n)
	unflushed := make([]int64, 0, n)
	var buf []byte

	base := time.Now()
	send := func() {
		c.nextID++
		buf = appendCall(buf[:0], c.mode, c.tool, c.nextID)
		buf = append(buf, '\n')
		c.bw.Write(buf)
		inflight[c.nextID] = -1
		unflushed = append(unflushed, c.nextID)
	}
	flush := func() error {
		now := time.Since(base)
		for _, id := range unflushed {
			inflight[id] = now
		}
		unflushed = unflushed[:0]
		return c.bw.Flush()
	}

	res := &Result{InFlight: n}
	lat := make([]time.Duration, 0, 1<<16)
	var (
		outstanding  = 0
		measuring    = false
		stopping     = false
		t0, t1       time.Duration
		cpu0, cpu1   time.Duration
		self0, self1 time.Duration
		warmEnd      = o.Warmup
	)
	for range n {
		send()
		outstanding++
	}
	for outstanding > 0 {
		if len(unflushed) > 0 && c.br.Buffered() == 0 {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		line, err := c.readLine()
		if err != nil {
			return nil, err
		}
		var r callResponse
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("bad response line %q: %v", truncate(line, 200), err)
		}
		if r.ID == nil {
			continue // a notification
		}
		id := *r.ID
		sentAt, ok := inflight[id]
		if !ok || sentAt < 0 {
			return nil, fmt.Errorf("response to a request not in flight (id %d): %s", id, truncate(line, 200))
		}
		delete(inflight, id)
		now := time.Since(base)
		outstanding--
		if err := r.check(id); err != nil {
			res.Errors++
			if res.FirstError == "" {
				res.FirstError = err.Error()
			}
		}
		switch {
		case !measuring && !stopping && now >= warmEnd:
			measuring = true
			t0 = now
			if o.ServerCPU != nil {
				if cpu0, err = o.ServerCPU(); err != nil {
					return nil, err
				}
			}
			self0 = selfCPU()
		case measuring:
			lat = append(lat, now-sentAt)
			res.Calls++
			if now-t0 >= o.Duration || (o.Count > 0 && res.Calls >= o.Count) {
				measuring, stopping = false, true
				t1 = now
				if o.ServerCPU != nil {
					if cpu1, err = o.ServerCPU(); err != nil {
						return nil, err
					}
				}
				self1 = selfCPU()
			}
		}
		if !stopping {
			send()
			outstanding++
		}
	}
	if !stopping {
		return nil, errors.New("run ended before the measured window")
	}
	res.setTimes(t1-t0, lat)
	if o.ServerCPU != nil {
		res.ServerCPUus = perCall(cpu1-cpu0, res.Calls)
	}
	res.ClientCPUus = perCall(self1-self0, res.Calls)
	return res, nil
}

// truncate shortens b for error messages.
func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
