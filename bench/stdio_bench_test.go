// Package bench_test holds Go benchmarks of wasmcp against its baselines,
// in process: each server reads requests from an OS pipe and writes
// responses to another, and the load generator's closed-loop client
// (8 requests in flight) drives it. One op is one validated tools/call.
// allocs/op, B/op and cpu-µs/op (process CPU time, which other jobs on a
// shared machine disturb less than ns/op) cover client and server
// together; the bare echo shows the client's share.
//
//	go test -run '^$' -bench . -count 6 | tee new.txt
//	go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da new.txt
package bench_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/bench/internal/bare"
	"github.com/wasmcp/wasmcp/bench/internal/loadgen"
	"github.com/wasmcp/wasmcp/bench/internal/native"
	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/server"
)

// cacheDir is the wasmcp compilation cache shared by every benchmark, so
// that only the first start of each plugin compiles it: $WASMCP_BENCH_CACHE
// if set (kept, so that CPU profiles need not include compilation), else a
// temporary directory.
var cacheDir string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Getenv(receiverEnv) != "" {
		return serveReceiver()
	}
	cacheDir = os.Getenv("WASMCP_BENCH_CACHE")
	if cacheDir == "" {
		dir, err := os.MkdirTemp("", "wasmcp-bench-cache-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		cacheDir = dir
	}
	return m.Run()
}

// serveFunc serves MCP reading r and writing w until r reaches EOF, then
// closes w. It may return begin, which starts counting server metrics and
// returns the function that reports them.
type serveFunc func(tb testing.TB, r io.ReadCloser, w io.WriteCloser) (begin func() func(*testing.B))

func serveBare(tb testing.TB, r io.ReadCloser, w io.WriteCloser) func() func(*testing.B) {
	go func() {
		bare.ServeStdio(r, w)
		w.Close()
	}()
	return nil
}

func serveNative(tb testing.TB, r io.ReadCloser, w io.WriteCloser) func() func(*testing.B) {
	s := native.NewServer()
	go s.Run(context.Background(), &mcp.IOTransport{Reader: r, Writer: w})
	return nil
}

// newWasmcp returns wasmcp's server (the code behind `wasmcp serve`) with
// one plugin named "echo" and default limits plus the extra [[plugins]]
// lines.
func newWasmcp(tb testing.TB, plugin, extra string) *server.Server {
	path, err := filepath.Abs(plugin)
	if err != nil {
		tb.Fatal(err)
	}
	toml := fmt.Sprintf("[server]\ncache_dir = %q\nkv_dir = \":memory:\"\n[[plugins]]\nname = \"echo\"\npath = %q\n%s", cacheDir, path, extra)
	cfg, err := config.Parse([]byte(toml), "")
	if err != nil {
		tb.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		tb.Fatal(err)
	}
	srv, err := server.New(context.Background(), cfg, server.Options{Version: "bench"})
	if err != nil {
		tb.Fatal(err)
	}
	return srv
}

// poolReport returns a begin function for srv's plugin: it reports how
// many instances were created and recycled per 1000 calls.
func poolReport(srv *server.Server) func() func(*testing.B) {
	pl := srv.Registry().Plugins()[0]
	return func() func(*testing.B) {
		before := pl.Stats()
		return func(b *testing.B) {
			st := pl.Stats()
			b.ReportMetric(float64(st.Created-before.Created)*1000/float64(b.N), "instances/kcall")
			b.ReportMetric(float64(st.Recycled-before.Recycled)*1000/float64(b.N), "recycled/kcall")
		}
	}
}

// serveWasmcp returns a serveFunc running wasmcp with the given plugin.
func serveWasmcp(plugin string) serveFunc { return serveWasmcpWith(plugin, nil) }

// serveWasmcpTelemetry serves plugin with tracing (to an OTLP/HTTP
// receiver on loopback, in another process, that discards what it gets)
// and metrics on.
func serveWasmcpTelemetry(plugin string) serveFunc { return serveWasmcpTraced(plugin, "") }

// serveWasmcpTraced is serveWasmcpTelemetry with extra [telemetry] lines.
func serveWasmcpTraced(plugin, extra string) serveFunc {
	return serveWasmcpWith(plugin, func(tb testing.TB) string {
		return fmt.Sprintf("[telemetry]\nmetrics = \"127.0.0.1:0\"\nendpoint = %q\nschedule_delay = \"1s\"\n%s", startReceiver(tb), extra)
	})
}

// receiverEnv makes the test binary an OTLP receiver (serveReceiver).
const receiverEnv = "WASMCP_BENCH_OTLP_RECEIVER"

// startReceiver starts an OTLP/HTTP receiver that discards what it gets
// and returns its URL. It is this test binary in a process of its own,
// as a collector would be: its work (reading the requests off the
// socket) is not the server's, and stays out of cpu-µs/op; the
// exporter's (encoding, posting) stays in. It ends with the benchmark
// process (its standard input closes).
func startReceiver(tb testing.TB) string {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), receiverEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err1 := cmd.StdinPipe()
	out, err2 := cmd.StdoutPipe()
	if err := errors.Join(err1, err2, cmd.Start()); err != nil {
		tb.Fatal(err)
	}
	receivers = append(receivers, stdin) // kept open, so that it lives on
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		tb.Fatalf("OTLP receiver: %v", err)
	}
	go cmd.Wait()
	return strings.TrimSpace(line)
}

// receivers are the standard inputs of the receiver processes.
var receivers []io.WriteCloser

// serveReceiver is the receiver process: it prints its URL and serves
// until its standard input ends.
func serveReceiver() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("http://%s\n", ln.Addr())
	var mu sync.Mutex
	var reqs, bytes int64
	go func() {
		io.Copy(io.Discard, os.Stdin)
		mu.Lock()
		// What it cost, to compare with cpu-µs/op × calls.
		fmt.Fprintf(os.Stderr, "OTLP receiver: %d requests, %d bytes, %v CPU\n", reqs, bytes, processCPU())
		os.Exit(0)
	}()
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		mu.Lock()
		reqs, bytes = reqs+1, bytes+n
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	return 1
}

func serveWasmcpWith(plugin string, extra func(testing.TB) string) serveFunc {
	return func(tb testing.TB, r io.ReadCloser, w io.WriteCloser) func() func(*testing.B) {
		x := ""
		if extra != nil {
			x = extra(tb)
		}
		srv := newWasmcp(tb, plugin, x)
		ctx := context.Background()
		go func() {
			srv.ServeStdio(ctx, r, w)
			w.Close()
			srv.Close(ctx)
		}()
		return poolReport(srv)
	}
}

// stdioRig is a server on pipes with a client that has done its handshake,
// kept across the b.N steps of one benchmark.
type stdioRig struct {
	c     *loadgen.StdioClient
	begin func() func(*testing.B)
	close func()
}

func startStdio(tb testing.TB, serve serveFunc, mode loadgen.Mode) *stdioRig {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	respR, respW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	rig := &stdioRig{begin: serve(tb, reqR, respW)}
	rig.close = func() {
		reqW.Close()
		io.Copy(io.Discard, respR)
		respR.Close()
	}
	rig.c = loadgen.NewStdioClient(respR, reqW, mode, "echo")
	if err := rig.c.Handshake(); err != nil {
		rig.close()
		tb.Fatal(err)
	}
	return rig
}

// run makes b.N echo calls, 8 in flight.
func (rig *stdioRig) run(b *testing.B) {
	measureLoad(b, rig.begin, func(n int) (*loadgen.Result, error) {
		return rig.c.Run(loadgen.RunOptions{InFlight: 8, Count: n, Duration: 1 << 62})
	})
}

// measureLoad times run(b.N), a load-generator run of b.N calls, and
// reports its process CPU, latency percentiles and, through begin (if
// any), the server's own metrics; invalid responses fail b.
func measureLoad(b *testing.B, begin func() func(*testing.B), run func(n int) (*loadgen.Result, error)) {
	var report func(*testing.B)
	if begin != nil {
		report = begin()
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	res, err := run(b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	reportCPU(b, cpu0)
	if res.Errors > 0 {
		b.Fatalf("%d invalid responses, first: %s", res.Errors, res.FirstError)
	}
	b.ReportMetric(res.P50us, "p50-µs")
	b.ReportMetric(res.P99us, "p99-µs")
	if report != nil {
		report(b)
	}
}

// BenchmarkStdioCall measures one tools/call of the trivial echo tool over
// stdio-like pipes (legacy session, 8 in flight) for the bare echo, the
// official Go SDK and wasmcp with the C and Go echo plugins. Each server is
// started once per sub-benchmark and serves all its b.N steps.
func BenchmarkStdioCall(b *testing.B) {
	parent := b
	for _, s := range []struct {
		name  string
		serve serveFunc
	}{
		{"bare", serveBare},
		{"native", serveNative},
		{"wasmcp-c", serveWasmcp("plugins/cecho/cecho.wasm")},
		{"wasmcp-c-telemetry", serveWasmcpTelemetry("plugins/cecho/cecho.wasm")},
		{"wasmcp-c-sampled", serveWasmcpTraced("plugins/cecho/cecho.wasm", "sampler = \"parentbased_traceidratio\"\nsampler_arg = \"0.1\"\n")},
		{"wasmcp-c-metrics", serveWasmcpWith("plugins/cecho/cecho.wasm", func(testing.TB) string { return "[telemetry]\nmetrics = \"x\"\n" })},
		{"wasmcp-go", serveWasmcp("plugins/goecho/goecho.wasm")},
		{"wasmcp-go-telemetry", serveWasmcpTelemetry("plugins/goecho/goecho.wasm")},
		{"wasmcp-component", serveWasmcp("../testdata/components/c-echo.wasm")},
	} {
		var rig *stdioRig
		b.Run(s.name, func(b *testing.B) {
			if rig == nil {
				rig = startStdio(b, s.serve, loadgen.Legacy)
				parent.Cleanup(rig.close)
			}
			rig.run(b)
		})
	}
}

// processCPU returns the CPU time (user + system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process CPU time per op since cpu0: on a shared
// machine it moves less with other jobs' load than ns/op (wall time) does.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e3, "cpu-µs/op")
}
