package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// Response is a decoded JSON-RPC response.
type Response struct {
	ID     int64           `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// Conn is a multiplexed MCP client on a server's stdio: any number of
// goroutines may call it at once. It is slower per call than StdioClient
// and meant for latency checks, not throughput.
type Conn struct {
	mode Mode

	wmu sync.Mutex
	w   *bufio.Writer

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan *Response
	err     error // set when the read loop ends
	done    chan struct{}
}

// NewConn starts reading responses from r; requests go to w.
func NewConn(r io.Reader, w io.Writer, mode Mode) *Conn {
	c := &Conn{mode: mode, w: bufio.NewWriter(w), pending: map[int64]chan *Response{}, done: make(chan struct{})}
	go c.readLoop(r)
	return c
}

func (c *Conn) readLoop(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var err error
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var probe struct {
			ID     *json.RawMessage `json:"id"`
			Method string           `json:"method"`
		}
		if json.Unmarshal(line, &probe) != nil || probe.ID == nil || probe.Method != "" {
			continue // a notification or a request from the server: ignored
		}
		var resp Response
		if e := json.Unmarshal(line, &resp); e != nil {
			err = fmt.Errorf("bad response %q: %v", truncate(line, 200), e)
			break
		}
		c.mu.Lock()
		ch := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- &resp
		}
	}
	if err == nil {
		err = sc.Err()
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	c.mu.Lock()
	c.err = fmt.Errorf("connection closed: %w", err)
	c.mu.Unlock()
	close(c.done)
}

// Initialize performs the legacy handshake (nothing in modern mode).
func (c *Conn) Initialize(ctx context.Context) error {
	if c.mode != Legacy {
		return nil
	}
	resp, err := c.Call(ctx, "initialize", json.RawMessage(`{"protocolVersion":"`+LegacyVersion+`","capabilities":{},"clientInfo":{"name":"wasmcp-bench","version":"1.0.0"}}`))
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return fmt.Errorf("initialize: %w", resp.Error)
	}
	return c.Notify("notifications/initialized", nil)
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params json.RawMessage) error {
	b := []byte(`{"jsonrpc":"2.0","method":` + strconv.Quote(method))
	if params != nil {
		b = append(append(b, `,"params":`...), params...)
	}
	return c.write(append(b, "}\n"...))
}

func (c *Conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.w.Write(b); err != nil {
		return err
	}
	return c.w.Flush()
}

// Call sends a request and waits for its response. params must be a JSON
// object or nil; in modern mode the request _meta is added to it. A
// JSON-RPC error is returned in Response.Error, not as err.
func (c *Conn) Call(ctx context.Context, method string, params json.RawMessage) (*Response, error) {
	ch := make(chan *Response, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()

	b := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":` + strconv.Quote(method))
	if c.mode == Modern {
		if len(params) < 2 {
			params = json.RawMessage(`{}`)
		}
		p := bytes.TrimSpace(params)
		sep := ","
		if bytes.Equal(bytes.TrimSpace(p[1:]), []byte("}")) {
			sep = ""
		}
		params = append(append(append([]byte(`{`), modernMeta...), sep...), p[1:]...)
	}
	if params != nil {
		b = append(append(b, `,"params":`...), params...)
	}
	if err := c.write(append(b, "}\n"...)); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return nil, c.err
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// CallEcho calls tool with {"text": text} and checks the answer is that
// text.
func (c *Conn) CallEcho(ctx context.Context, tool, text string) error {
	p, _ := json.Marshal(map[string]any{"name": tool, "arguments": map[string]string{"text": text}})
	resp, err := c.Call(ctx, "tools/call", p)
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return resp.Error
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		return err
	}
	if r.IsError || len(r.Content) != 1 || r.Content[0].Text != text {
		return fmt.Errorf("unexpected echo result %s", resp.Result)
	}
	return nil
}
