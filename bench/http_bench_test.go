package bench_test

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/wasmcp/wasmcp/bench/internal/bare"
	"github.com/wasmcp/wasmcp/bench/internal/loadgen"
	"github.com/wasmcp/wasmcp/bench/internal/native"
)

// httpServe starts a server on ln serving MCP at /mcp. It returns stop,
// and may return begin (see serveFunc).
type httpServe func(tb testing.TB, ln net.Listener) (stop func(), begin func() func(*testing.B))

func serveHTTPHandler(h http.Handler) httpServe {
	return func(tb testing.TB, ln net.Listener) (func(), func() func(*testing.B)) {
		mux := http.NewServeMux()
		mux.Handle("/mcp", h)
		hs := &http.Server{Handler: mux}
		go hs.Serve(ln)
		return func() { hs.Close() }, nil
	}
}

func serveWasmcpHTTP(plugin string) httpServe {
	return func(tb testing.TB, ln net.Listener) (func(), func() func(*testing.B)) {
		// As in run.sh: a queue for 64 clients instead of the default 16.
		srv := newWasmcp(tb, plugin, "max_queue = 64\n")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			srv.ServeHTTP(ctx, ln)
			close(done)
		}()
		return func() {
			cancel()
			<-done
			srv.Close(context.Background())
		}, poolReport(srv)
	}
}

// BenchmarkHTTPCall measures one stateless 2026-07-28 tools/call of the
// echo tool over Streamable HTTP with 64 concurrent keep-alive clients
// (net/http), in process, for a bare net/http JSON handler, the official
// Go SDK's stateless handler and wasmcp with the C and Go echo plugins.
// Each server is started once per sub-benchmark.
func BenchmarkHTTPCall(b *testing.B) {
	parent := b
	for _, s := range []struct {
		name  string
		serve httpServe
	}{
		{"bare", serveHTTPHandler(bare.Handler())},
		{"native", serveHTTPHandler(native.HTTPHandler(native.NewServer()))},
		{"wasmcp-c", serveWasmcpHTTP("plugins/cecho/cecho.wasm")},
		{"wasmcp-go", serveWasmcpHTTP("plugins/goecho/goecho.wasm")},
	} {
		var (
			url    string
			begin  func() func(*testing.B)
			client = loadgen.NewHTTPClient(64)
		)
		b.Run(s.name, func(b *testing.B) {
			if url == "" {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				var stop func()
				stop, begin = s.serve(b, ln)
				parent.Cleanup(func() {
					client.CloseIdleConnections()
					stop()
				})
				url = "http://" + ln.Addr().String() + "/mcp"
			}
			measureLoad(b, begin, func(n int) (*loadgen.Result, error) {
				return loadgen.RunHTTP(loadgen.HTTPOptions{URL: url, Tool: "echo", Clients: 64, Count: n, Client: client})
			})
		})
	}
}
