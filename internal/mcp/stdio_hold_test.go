package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

// TestStdioHoldNotAcrossRead checks that the answers the reader holds
// while it has input buffered go out before it waits for more input,
// whatever the buffered lines were: a client that sends a request and a
// line too long in one write, and then waits, gets both answers.
func TestStdioHoldNotAcrossRead(t *testing.T) {
	const max = 1 << 10
	for _, tc := range []struct {
		name  string
		lines []string
	}{
		{"request, line too long", []string{request(1, "ping", nil), strings.Repeat(" ", 2*max)}},
		{"request, line too long, request", []string{request(1, "ping", nil), strings.Repeat(" ", 2*max), request(2, "ping", nil)}},
		{"line too long, request", []string{strings.Repeat(" ", 2*max), request(1, "ping", nil)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startStdio(t, nil, &mcp.Options{MaxMessageBytes: max})
			c.initialize("2025-11-25", nil)
			c.send(strings.Join(tc.lines, "\n")) // one write: read in one piece
			want := map[string]int{}             // the answers due, in any order
			for _, line := range tc.lines {
				if strings.HasPrefix(line, " ") {
					want["error"]++
				} else {
					want["result"]++
				}
			}
			for range tc.lines {
				m := c.next()
				if m.Error != nil && m.Error.Code == jsonrpc.CodeInvalidRequest {
					want["error"]--
				} else {
					wantResult(t, m)
					want["result"]--
				}
			}
			if want["error"] != 0 || want["result"] != 0 {
				t.Errorf("answers short of due (negative: beyond): %v", want)
			}
		})
	}
}

// TestStdioShutdownPipelined checks that a graceful Shutdown answers the
// request in flight when the client's answer to its question comes with
// more lines in one write: the reader holds the output while it has
// input buffered, and must not stop with the answer held. The race it
// guards against is narrow, so the scenario is repeated.
func TestStdioShutdownPipelined(t *testing.T) {
	pad := strings.Repeat("x", 12<<10) // lines that take the reader a while
	for i := range 10 {
		c, ask := startElicit(t)
		shut := shutdownInBackground(c.srv)
		for n := 0; ; n++ { // until the server refuses new requests
			if m, _ := c.rpc(fmt.Sprint("probe", n), "ping", nil); m.Error != nil {
				break
			}
		}
		lines := []string{`{"jsonrpc":"2.0","id":` + string(ask.ID) + `,"result":{"action":"accept","content":{"name":"Ann"}}}`}
		for j := range 4 {
			lines = append(lines, request(fmt.Sprint("late", j), "ping", map[string]any{"pad": pad}))
		}
		c.send(strings.Join(lines, "\n"))
		res, _ := c.await("e")
		if got := textOf(t, res.Result); got != "hello Ann" {
			t.Fatalf("round %d: in-flight call: %s", i, res.raw)
		}
		if err := <-shut; err != nil {
			t.Fatalf("Shutdown = %v", err)
		}
		if err := <-c.done; err != nil {
			t.Fatalf("ServeStdio = %v", err)
		}
		c.done <- nil
	}
}

// stopProvider is the test provider with one more tool, "stop", which
// runs hook with its context.
type stopProvider struct {
	*mcptest.Provider
	hook func(ctx context.Context)
}

func (p stopProvider) CallTool(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	if r.Parsed.Name == "stop" {
		p.hook(ctx)
		return json.RawMessage(`{"content":[]}`), nil
	}
	return p.Provider.CallTool(ctx, r)
}

// lateReader yields data on its first Read, then counts the Reads that
// start once ended is set, and blocks the others until release closes.
type lateReader struct {
	data    string
	reads   atomic.Int32
	ended   atomic.Bool
	late    chan struct{}
	release chan struct{}
}

func (r *lateReader) Read(p []byte) (int, error) {
	if r.reads.Add(1) == 1 {
		return copy(p, r.data), nil
	}
	if r.ended.Load() {
		close(r.late)
		return 0, io.EOF
	}
	<-r.release
	return 0, io.EOF
}

// TestStdioNoReadAfterEnd checks that ServeStdio reads nothing more once
// its context ended, also when the request running then ran on the
// reader itself (inline): the documentation promises that at most a Read
// already blocked is left behind.
func TestStdioNoReadAfterEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := &lateReader{late: make(chan struct{}), release: make(chan struct{})}
	defer close(in.release)
	in.data = request("init", "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}}) + "\n" +
		notification("notifications/initialized", nil) + "\n" +
		request(1, "tools/call", map[string]any{"name": "stop"}) + "\n"
	p := mcptest.New(nil)
	s := mcp.NewServer(stopProvider{Provider: p, hook: func(cctx context.Context) {
		cancel()
		<-cctx.Done() // the connection ended
		in.ended.Store(true)
	}}, nil)
	defer s.Close()
	p.SetServer(s)
	if err := s.ServeStdio(ctx, in, io.Discard); !errors.Is(err, context.Canceled) {
		t.Fatalf("ServeStdio = %v, want context.Canceled", err)
	}
	select {
	case <-in.late:
		t.Fatal("ServeStdio read its input after its context ended")
	case <-time.After(100 * time.Millisecond): // a late Read comes at once
	}
}
