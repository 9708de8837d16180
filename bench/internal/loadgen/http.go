package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// HTTPOptions configure an HTTP run.
type HTTPOptions struct {
	// URL is the MCP endpoint.
	URL string
	// Tool is the tool to call.
	Tool string
	// Clients is the number of concurrent keep-alive clients, each with one
	// request outstanding (default 64).
	Clients int
	// Warmup is run first and not measured; Duration is the measured
	// window.
	Warmup, Duration time.Duration
	// Count, if positive, replaces Warmup and Duration: exactly Count
	// calls are made and all of them are measured (for Go benchmarks).
	Count int
	// Client, if set, is used instead of a new NewHTTPClient(Clients), so
	// that its connections can be kept from one run to the next.
	Client *http.Client
	// ServerCPU, if set, returns the CPU time the server process has used
	// so far.
	ServerCPU func() (time.Duration, error)
}

// RunHTTP has o.Clients clients POST stateless 2026-07-28 tools/call
// requests (params._meta with the protocol version and empty client
// capabilities; headers Content-Type, Accept, MCP-Protocol-Version,
// Mcp-Method and Mcp-Name) back to back on keep-alive connections,
// validating every response, and measures the calls completed in the
// window after the warm-up. Responses may be application/json or a
// text/event-stream carrying the response as an event.
func RunHTTP(o HTTPOptions) (*Result, error) {
	c := o.Clients
	if c <= 0 {
		c = 64
	}
	client := o.Client
	if client == nil {
		client = NewHTTPClient(c)
		defer client.CloseIdleConnections()
	}

	var (
		nextID    atomic.Int64
		stop      atomic.Bool
		measuring atomic.Bool
		wg        sync.WaitGroup
		mu        sync.Mutex
		lat       []time.Duration
		errs      int
		firstErr  string
		fatal     error
	)
	record := func(l []time.Duration, e int, fe string, f error) {
		mu.Lock()
		defer mu.Unlock()
		lat = append(lat, l...)
		errs += e
		if firstErr == "" {
			firstErr = fe
		}
		if fatal == nil {
			fatal = f
		}
	}
	if o.Count > 0 {
		measuring.Store(true)
	}
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var (
				mine  = make([]time.Duration, 0, 1<<12)
				e     int
				fe    string
				body  []byte
				rbuf  bytes.Buffer
				fails int
			)
			for !stop.Load() {
				id := nextID.Add(1)
				if o.Count > 0 && id > int64(o.Count) {
					break
				}
				body = appendCall(body[:0], Modern, o.Tool, id)
				req, err := http.NewRequest(http.MethodPost, o.URL, bytes.NewReader(body))
				if err != nil {
					record(mine, e, fe, err)
					return
				}
				h := req.Header
				h["Content-Type"] = []string{"application/json"}
				h["Accept"] = []string{"application/json, text/event-stream"}
				h["Mcp-Protocol-Version"] = []string{ModernVersion}
				h["Mcp-Method"] = []string{"tools/call"}
				h["Mcp-Name"] = []string{o.Tool}
				start := time.Now()
				err = doCall(client, req, id, &rbuf)
				d := time.Since(start)
				if err != nil {
					var ce checkError
					if !errors.As(err, &ce) {
						// Transport failure: give up after a few in a row.
						if fails++; fails > 3 {
							record(mine, e, fe, err)
							return
						}
					}
					e++
					if fe == "" {
						fe = err.Error()
					}
					continue
				}
				fails = 0
				if measuring.Load() {
					mine = append(mine, d)
				}
			}
			record(mine, e, fe, nil)
		}()
	}

	if o.Count > 0 {
		self0 := selfCPU()
		wg.Wait()
		window := time.Since(start)
		if fatal != nil {
			return nil, fatal
		}
		res := &Result{InFlight: c, Calls: len(lat), Errors: errs, FirstError: firstErr}
		res.setTimes(window, lat)
		res.ClientCPUus = perCall(selfCPU()-self0, res.Calls)
		return res, nil
	}

	time.Sleep(o.Warmup)
	var cpu0, cpu1 time.Duration
	var err error
	if o.ServerCPU != nil {
		if cpu0, err = o.ServerCPU(); err != nil {
			stop.Store(true)
			wg.Wait()
			return nil, err
		}
	}
	self0 := selfCPU()
	t0 := time.Now()
	measuring.Store(true)
	time.Sleep(o.Duration)
	measuring.Store(false)
	window := time.Since(t0)
	self1 := selfCPU()
	if o.ServerCPU != nil {
		cpu1, err = o.ServerCPU()
	}
	stop.Store(true)
	wg.Wait()
	if fatal != nil {
		return nil, fatal
	}
	if err != nil {
		return nil, err
	}
	res := &Result{InFlight: c, Calls: len(lat), Errors: errs, FirstError: firstErr}
	res.setTimes(window, lat)
	if o.ServerCPU != nil {
		res.ServerCPUus = perCall(cpu1-cpu0, res.Calls)
	}
	res.ClientCPUus = perCall(self1-self0, res.Calls)
	return res, nil
}

// NewHTTPClient returns the client RunHTTP uses: plain net/http, HTTP/1.1
// keep-alive, up to conns connections to the server, no compression.
func NewHTTPClient(conns int) *http.Client {
	tr := &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		DisableCompression:  true,
		IdleConnTimeout:     time.Minute,
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// checkError is an invalid response (as opposed to a transport failure).
type checkError struct{ error }

// doCall sends req, reads the whole response and validates it as the
// answer to request id.
func doCall(client *http.Client, req *http.Request, id int64, buf *bytes.Buffer) error {
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return checkError{fmt.Errorf("HTTP %s: %s", resp.Status, truncate(buf.Bytes(), 200))}
	}
	msg := buf.Bytes()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
	case "text/event-stream":
		if msg = sseResponse(msg); msg == nil {
			return checkError{fmt.Errorf("no JSON-RPC response in the event stream: %s", truncate(buf.Bytes(), 200))}
		}
	default:
		return checkError{fmt.Errorf("unexpected Content-Type %q", resp.Header.Get("Content-Type"))}
	}
	var r callResponse
	if err := json.Unmarshal(msg, &r); err != nil {
		return checkError{fmt.Errorf("bad response %q: %v", truncate(msg, 200), err)}
	}
	if r.ID == nil || *r.ID != id {
		return checkError{fmt.Errorf("response id does not match request %d: %s", id, truncate(msg, 200))}
	}
	if err := r.check(id); err != nil {
		return checkError{err}
	}
	return nil
}

// sseResponse returns the data of the first event in an event stream that
// is a JSON-RPC response (has an id and a result or error), or nil.
func sseResponse(stream []byte) []byte {
	for _, ev := range bytes.Split(stream, []byte("\n\n")) {
		var data []byte
		for _, line := range bytes.Split(ev, []byte("\n")) {
			line = bytes.TrimSuffix(line, []byte("\r"))
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
			}
		}
		if bytes.Contains(data, []byte(`"result"`)) || bytes.Contains(data, []byte(`"error"`)) {
			return data
		}
	}
	return nil
}
