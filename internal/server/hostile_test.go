package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// This file runs the hostile-plugin corpus (testdata/hostile) through a
// real server over stdio. For each case it checks what the client sees,
// that the good plugin in the same server still answers exactly, and
// that the host's heap stays bounded. docs/hostile-corpus.md lists the cases
// and their answers.

// hostileDir holds the hostile-plugin corpus (testdata/hostile/README.md).
const hostileDir = "../../testdata/hostile"

// hostilePath returns the absolute path of corpus module name.wasm.
func hostilePath(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(hostileDir, name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// memKV opens most test configs: a [server] table with the kv store in
// memory.
const memKV = `
[server]
kv_dir = ":memory:"
`

// pluginTOML is a [[plugins]] table serving the module at path as name,
// with more lines (a prefix, limits, a [plugins.grants] table) after it.
func pluginTOML(name, path string, more ...string) string {
	s := "[[plugins]]\nname = " + quote(name) + "\npath = " + quote(path) + "\n"
	for _, m := range more {
		s += m + "\n"
	}
	return s
}

// corpusTOML is pluginTOML for corpus module name.wasm, served as name.
func corpusTOML(t testing.TB, name string, more ...string) string {
	t.Helper()
	return pluginTOML(name, hostilePath(t, name), more...)
}

// copyCorpus copies corpus module name.wasm into dir as as.wasm (so that
// one server can load a module twice: two plugins may not share a file)
// and returns the copy's path.
func copyCorpus(t testing.TB, name, dir, as string) string {
	t.Helper()
	wasm, err := os.ReadFile(hostilePath(t, name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, as+".wasm")
	if err := os.WriteFile(p, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkRefused fails the test unless err is a load error containing every
// one of want.
func checkRefused(t testing.TB, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("loaded, want a load error")
	}
	t.Logf("refused: %v", err)
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("load error %q does not contain %q", err, w)
		}
	}
}

// Heap bounds. maxCaseHeap bounds the heap in use at any moment of a case
// (sampled); maxHeapGrowth bounds what a case leaves behind once collected.
// maxCaseLog bounds what the server logs during a case.
const (
	maxCaseHeap   = 256 << 20
	maxHeapGrowth = 32 << 20
	maxCaseLog    = 4 << 20
)

// publicIP is the address the test resolver gives public.test: a public
// address, which the test dialer connects to the local web server.
var publicIP = netip.MustParseAddr("93.184.216.34")

// hostileEnv is the world around the hostile server: mounts with a secret
// next to them, a web server on loopback and a resolver that makes names
// point at private addresses.
type hostileEnv struct {
	dir     string // temporary root
	mount   string // granted read-only as /data (good, sandbox)
	rwmount string // granted read-write as /data (rawfs)
	secret  string // a file outside every mount
	webPort string
	web     *httptest.Server

	mu     sync.Mutex
	dialed []string // dials to anything but publicIP: must stay empty

	logBytes atomic.Int64 // bytes the server logged
}

const secretText = "TOP SECRET"

// longHostileEnv is newHostileEnv for a test that runs for seconds: under
// -short it skips the test, saying why.
func longHostileEnv(t *testing.T, why string) *hostileEnv {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
	return newHostileEnv(t)
}

func newHostileEnv(t *testing.T) *hostileEnv {
	t.Helper()
	e := &hostileEnv{dir: t.TempDir()}
	e.mount = filepath.Join(e.dir, "mount")
	e.rwmount = filepath.Join(e.dir, "rwmount")
	e.secret = filepath.Join(e.dir, "secret.txt")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(e.secret, []byte(secretText+"\n"), 0o644))
	for _, m := range []string{e.mount, e.rwmount} {
		must(os.MkdirAll(filepath.Join(m, "sub"), 0o755))
		must(os.WriteFile(filepath.Join(m, "ok.txt"), []byte("fine\n"), 0o644))
		must(os.Symlink("../secret.txt", filepath.Join(m, "link_rel")))
		must(os.Symlink(e.secret, filepath.Join(m, "link_abs")))
		must(os.Symlink("..", filepath.Join(m, "dirlink")))
		must(os.Symlink("/etc", filepath.Join(m, "etclink")))
		must(os.Symlink("sub", filepath.Join(m, "inlink"))) // stays inside
		must(os.WriteFile(filepath.Join(m, "sub", "in.txt"), []byte("inside\n"), 0o644))
	}
	e.web = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			io.WriteString(w, "hello")
		case "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(e.web.Close)
	_, e.webPort, _ = net.SplitHostPort(e.web.Listener.Addr().String())
	return e
}

// resolver answers for the test's names only; nothing reaches real DNS.
type testResolver map[string][]netip.Addr

func (r testResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (e *hostileEnv) policy() hostapi.HTTPPolicy {
	addr := func(s ...string) []netip.Addr {
		var a []netip.Addr
		for _, x := range s {
			a = append(a, netip.MustParseAddr(x))
		}
		return a
	}
	return hostapi.HTTPPolicy{
		Timeout: 5 * time.Second,
		Resolver: testResolver{
			"public.test":       {publicIP},
			"loop.test":         addr("127.0.0.1"),
			"loop6.test":        addr("::1"),
			"mapped.test":       addr("::ffff:127.0.0.1"),
			"meta.test":         addr("169.254.169.254"),
			"private.test":      addr("10.1.2.3"),
			"link.test":         addr("fe80::1"),
			"metadata.internal": addr("169.254.169.254"),
			"rebind.test":       addr("127.0.0.1", "10.0.0.1", "169.254.169.254"),
		},
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			host, port, _ := net.SplitHostPort(address)
			if host == publicIP.String() {
				var d net.Dialer
				return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
			}
			e.mu.Lock()
			e.dialed = append(e.dialed, address)
			e.mu.Unlock()
			return nil, fmt.Errorf("test dialer: refusing %s", address)
		},
	}
}

// countingWriter counts the bytes the server logs.
type countingWriter struct{ n *atomic.Int64 }

func (w countingWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return len(p), nil
}

// hostileConfig serves the good plugin and every hostile plugin that
// loads, each hostile one under its own prefix.
func (e *hostileEnv) config(t *testing.T) string {
	// prefixed serves corpus module name under the prefix name_.
	prefixed := func(name string, more ...string) string {
		return corpusTOML(t, name, append([]string{"prefix = " + quote(name+"_")}, more...)...)
	}
	roData := "fs = [{ host = " + quote(e.mount) + `, guest = "/data" }]`
	var web []string // what fetch may reach
	for _, host := range []string{"public.test:" + e.webPort, "loop.test:" + e.webPort, "loop6.test:" + e.webPort,
		"mapped.test:" + e.webPort, "meta.test", "private.test", "link.test", "metadata.internal", "rebind.test:" + e.webPort} {
		web = append(web, quote("http://"+host+"/"))
	}
	return `
[server]
name = "hostile"
kv_dir = ":memory:"
[limits]
timeout = "3s"
memory = "16MiB"
max_output = "64KiB"
instances = 2

` + corpusTOML(t, "good", "instances = 4", "max_queue = 64", "[plugins.grants]", "kv = true", roData) +
		prefixed("runaway", `timeout = "1s"`) +
		prefixed("traps") + prefixed("memory") + prefixed("memhog") + prefixed("output") + prefixed("exit") +
		prefixed("garbage", `max_output = "1MiB"`) +
		corpusTOML(t, "gocrash", `prefix = "go_"`, `memory = "32MiB"`, `timeout = "5s"`, "[plugins.grants]", `env = { TZ = "UTC" }`) +
		prefixed("sandbox", "[plugins.grants]", `env = { TZ = "UTC" }`, roData) +
		prefixed("rawfs", "[plugins.grants]", "fs = [{ host = "+quote(e.rwmount)+`, guest = "/data", mode = "rw" }]`) +
		corpusTOML(t, "fetch", "[plugins.grants]", "http = ["+strings.Join(web, ", ")+"]") +
		corpusTOML(t, "kvfill", `prefix = "kv_"`, "[plugins.grants]", "kv = true") +
		// The floods are bounded by output caps, not by time: 100,000
		// structured logs take about 1 s under -race on a quiet machine, and
		// a loaded clean-clone run took them past 3 s.
		prefixed("flood", `timeout = "20s"`) +
		prefixed("liar", "[plugins.grants]", "kv = true", "config = { manifest = '"+honestManifest+"' }")
}

// honestManifest is what the liar plugin says about itself when told the
// truth.
const honestManifest = `{"abi":1,"name":"liar","tools":[{"name":"ok"},{"name":"relie","inputSchema":{"type":"object","properties":{"manifest":{"type":"string"}}}}]}`

// hostileKVQuota is small so that exhausting it is quick.
var hostileKVQuota = hostapi.KVQuota{MaxKeys: 50, MaxBytes: 1 << 20, MaxValueSize: 256 << 10}

func newHostileServer(t *testing.T, e *hostileEnv, toml string) (*Server, error) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(countingWriter{&e.logBytes}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return buildServer(t, toml, ".", Options{Version: "test", Logger: log, HTTP: e.policy(), KVQuota: hostileKVQuota})
}

// guestCPU is the guest time every plugin of srv has run.
func guestCPU(srv *Server) time.Duration {
	var d time.Duration
	for _, p := range srv.Registry().Plugins() {
		d += p.Stats().GuestCPU
	}
	return d
}

func heapInuse() uint64 {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// hostileWant is the expected client-visible answer of a case.
type hostileWant struct {
	code     int      // JSON-RPC error code; 0 for a result
	isError  bool     // tool result isError
	contains []string // in the error message or the result text (case-insensitive)
	absent   []string // nowhere in the answer
	timeout  bool     // -32001 within the plugin's deadline plus slack
	idle     bool     // the guest ran under a tenth of the call's time (it slept, not spun)
}

// hostileCase is one call to a hostile plugin.
type hostileCase struct {
	name   string
	method string // default tools/call
	params map[string]any
	want   hostileWant
	// check, if set, checks more of the answer and what happened around
	// it; notes are the notifications the call caused.
	check func(t *testing.T, r response, notes [][]byte)
}

func tool(name string, args map[string]any) map[string]any {
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"name": name, "arguments": args}
}

// hostileCases is the corpus table; docs/hostile-corpus.md mirrors it.
func hostileCases(e *hostileEnv) []hostileCase {
	port := e.webPort
	crashed := func(what string) hostileWant {
		return hostileWant{isError: true, contains: []string{"plugin crashed: " + what}}
	}
	text := func(s ...string) hostileWant { return hostileWant{contains: s} }
	toolErr := func(s ...string) hostileWant { return hostileWant{isError: true, contains: s} }
	denied := text("errno -1 (denied")
	fetch := func(url string) map[string]any { return tool("fetch", map[string]any{"url": url}) }
	read := func(path string) map[string]any { return tool("sandbox_read", map[string]any{"path": path}) }
	escaped := hostileWant{contains: []string{"error:"}, absent: []string{secretText, "root:x:0:0"}}
	noSecret := []string{secretText, "root:x:0:0", "HOSTILE_SECRET"}
	return []hostileCase{
		// Runaway calls: stopped at the deadline.
		{name: "infinite loop", params: tool("runaway_spin", nil), want: hostileWant{timeout: true}},
		{name: "loop calling the host", params: tool("runaway_host_spin", nil), want: hostileWant{timeout: true}},
		{name: "one-hour sleep", params: tool("runaway_sleep", nil), want: hostileWant{timeout: true, idle: true}},

		// Traps of every kind.
		{name: "trap unreachable", params: tool("traps_unreachable", nil), want: crashed("unreachable")},
		{name: "trap integer divide by zero", params: tool("traps_div_zero", nil), want: crashed("integer divide by zero")},
		{name: "trap integer overflow", params: tool("traps_overflow", nil), want: crashed("integer overflow")},
		{name: "trap invalid conversion", params: tool("traps_convert", nil), want: crashed("invalid conversion to integer")},
		{name: "trap out of bounds memory", params: tool("traps_memory_oob", nil), want: crashed("out of bounds memory access")},
		{name: "trap null table entry", params: tool("traps_null_call", nil), want: crashed("invalid table access")},
		{name: "trap signature mismatch", params: tool("traps_sig_mismatch", nil), want: crashed("indirect call type mismatch")},
		{name: "trap table out of bounds", params: tool("traps_table_oob", nil), want: crashed("invalid table access")},
		{name: "deep recursion (wasm stack)", params: tool("traps_recurse", nil), want: crashed("stack overflow")},
		{name: "healthy after traps", params: tool("traps_alive", nil), want: text("alive")},

		// Memory.
		{name: "grow to the limit", params: tool("memory_grow", nil), want: text("refused after 256 pages")},
		{name: "grow 4 GiB at once", params: tool("memory_huge_grow", nil), want: text("refused")},
		{name: "grow past the limit, then trap", params: tool("memory_trap_after_grow", nil), want: toolErr("plugin ran out of memory (limit 16 MiB)")},
		{name: "C malloc until NULL", params: tool("memhog_malloc_null", nil), want: text("malloc returned NULL after")},
		{name: "C abort after malloc NULL", params: tool("memhog_abort_oom", nil), want: toolErr("plugin ran out of memory (limit 16 MiB)")},
		{name: "C shadow stack overflow", params: tool("memhog_stack_smash", nil), want: crashed("out of bounds memory access")},
		{name: "Go allocates until out of memory", params: tool("go_hog", nil), want: toolErr("plugin ran out of memory (limit 32 MiB)")},

		// Output.
		{name: "huge single output", params: tool("output_huge", nil), want: toolErr("plugin output exceeds 65536 bytes")},
		{name: "many small writes", params: tool("output_drip", nil), want: toolErr("plugin output exceeds 65536 bytes")},

		// Host imports with pointers and lengths outside memory.
		{name: "output_write out of bounds", params: tool("output_write_oob", nil), want: crashed("invalid memory range passed to output_write")},
		{name: "output_write wrapping ptr+len", params: tool("output_Write_wrap", nil), want: crashed("invalid memory range passed to output_write")},
		{name: "input_read out of bounds", params: tool("output_read_oob", nil), want: crashed("invalid memory range passed to input_read")},
		{name: "log out of bounds", params: tool("output_log_oob", nil), want: crashed("invalid memory range passed to log")},
		{name: "result_read out of bounds", params: tool("output_Result_oob", nil), want: crashed("invalid memory range passed to result_read")},
		{name: "call with pointers out of bounds", params: tool("output_call_oob", nil), want: text("errno -2")},
		{name: "call with a 4 GiB params length", params: tool("output_Call_huge", nil), want: text("errno -4")},
		{name: "zero-length ranges at the end of memory", params: tool("output_zero_oob", nil), want: text("zero ok")},

		// Exits.
		{name: "proc_exit(7) mid-call", params: tool("exit_exit7", nil), want: toolErr("plugin exited with code 7")},
		{name: "proc_exit(0) mid-call", params: tool("exit_exit0", nil), want: toolErr("plugin exited with code 0")},

		// Go guests.
		{name: "Go panic in the handler", params: tool("go_panic", nil), want: toolErr("the handler panicked: boom in the handler")},
		{name: "Go panic in a goroutine", params: tool("go_goroutine_panic", nil), want: crashed("panic: boom in a goroutine")},
		{name: "Go deadlock", params: tool("go_deadlock", nil), want: crashed("fatal error: all goroutines are asleep - deadlock!")},
		{name: "Go goroutines that never return", params: tool("go_goroutines", nil), want: hostileWant{timeout: true}},
		{name: "Go goroutines leaked past the call", params: tool("go_leak", nil), want: text("leaked 1000 goroutines")},
		{name: "Go os and net reach nothing", params: tool("go_sandbox", map[string]any{"path": e.secret, "dial": e.web.Listener.Addr().String()}),
			want: hostileWant{contains: []string{"file: error", `env: ["TZ=UTC"]`, "root: 0 entries", "dial: error"}, absent: noSecret}},

		// Files, environment and descriptors not granted.
		{name: "read a host file by absolute path", params: read(e.secret), want: escaped},
		{name: "read /etc/passwd", params: read("/etc/passwd"), want: escaped},
		{name: "environment is only what was granted", params: tool("sandbox_env", nil), want: hostileWant{contains: []string{"TZ=UTC;"}, absent: noSecret},
			check: func(t *testing.T, r response, _ [][]byte) {
				if got := decodeTool(t, r).text(); got != "TZ=UTC;" {
					t.Errorf("environment %q, want exactly TZ=UTC", got)
				}
			}},
		{name: "no sockets or other descriptors", params: tool("sandbox_fds", nil), want: text("0:"),
			check: func(t *testing.T, r response, _ [][]byte) {
				// stdin, stdout, stderr, the mount and the tree outside
				// the mounts (directories, WASI file type 3); a socket
				// would be type 5 or 6.
				fds := strings.Fields(decodeTool(t, r).text())
				if len(fds) != 5 || fds[3] != "3:3" || fds[4] != "4:3" {
					t.Errorf("descriptors %q, want stdio, the mount and / only", fds)
				}
				for _, fd := range fds {
					if strings.HasSuffix(fd, ":5") || strings.HasSuffix(fd, ":6") {
						t.Errorf("descriptor %s is a socket", fd)
					}
				}
			}},

		// Path escapes through a granted mount.
		{name: "mount: a file inside", params: read("/data/ok.txt"), want: text("ok:fine")},
		{name: "mount: a symlink that stays inside", params: read("/data/inlink/in.txt"), want: text("ok:inside")},
		{name: "mount: ..", params: read("/data/../secret.txt"), want: escaped},
		{name: "mount: sub/../..", params: read("/data/sub/../../secret.txt"), want: escaped},
		{name: "mount: relative symlink out", params: read("/data/link_rel"), want: escaped},
		{name: "mount: absolute symlink out", params: read("/data/link_abs"), want: escaped},
		{name: "mount: directory symlink to ..", params: read("/data/dirlink/secret.txt"), want: escaped},
		{name: "mount: directory symlink to /etc", params: read("/data/etclink/passwd"), want: escaped},
		{name: "mount: write to a read-only mount", params: tool("sandbox_write", map[string]any{"path": "/data/new.txt"}), want: text("error:"),
			check: func(t *testing.T, r response, _ [][]byte) {
				if _, err := os.Stat(filepath.Join(e.mount, "new.txt")); err == nil {
					t.Error("wrote through a read-only mount")
				}
			}},
		{name: "raw WASI: a file inside", params: tool("rawfs_ok", nil), want: text("read:fine")},
		{name: "raw WASI: ..", params: tool("rawfs_dotdot", nil), want: hostileWant{contains: []string{"errno"}, absent: noSecret}},
		{name: "raw WASI: sub/../..", params: tool("rawfs_subdotdot", nil), want: hostileWant{contains: []string{"errno"}, absent: noSecret}},
		{name: "raw WASI: absolute path", params: tool("rawfs_abs", nil), want: hostileWant{contains: []string{"errno"}, absent: noSecret}},
		{name: "raw WASI: symlink to /etc in a read-write mount", params: tool("rawfs_link", nil), want: hostileWant{contains: []string{"errno"}, absent: noSecret}},
		{name: "raw WASI: create a symlink out of a read-write mount", params: tool("rawfs_mklink", nil), want: hostileWant{contains: []string{"errno"}, absent: append(noSecret, "read:")}},

		// http/fetch to where it must not go.
		{name: "fetch: public name (control)", params: fetch("http://public.test:" + port + "/ok"), want: text("status 200: hello")},
		{name: "fetch: loopback IP not granted", params: fetch("http://127.0.0.1:" + port + "/ok"), want: denied},
		{name: "fetch: granted name resolving to loopback", params: fetch("http://loop.test:" + port + "/ok"), want: denied},
		{name: "fetch: granted name resolving to ::1", params: fetch("http://loop6.test:" + port + "/ok"), want: denied},
		{name: "fetch: granted name resolving to ::ffff:127.0.0.1", params: fetch("http://mapped.test:" + port + "/ok"), want: denied},
		{name: "fetch: granted name resolving to private", params: fetch("http://private.test/"), want: denied},
		{name: "fetch: granted name resolving to link-local", params: fetch("http://link.test/"), want: denied},
		{name: "fetch: granted name resolving to metadata", params: fetch("http://meta.test/latest/meta-data/"), want: denied},
		{name: "fetch: granted .internal name resolving to metadata", params: fetch("http://metadata.internal/latest/meta-data/"), want: denied},
		{name: "fetch: granted name resolving to loopback, private and metadata", params: fetch("http://rebind.test:" + port + "/ok"), want: denied},
		{name: "fetch: metadata IP not granted", params: fetch("http://169.254.169.254/latest/meta-data/"), want: denied},
		{name: "fetch: IPv6 loopback not granted", params: fetch("http://[::1]:" + port + "/ok"), want: denied},
		{name: "fetch: decimal IP not granted", params: fetch("http://2130706433:" + port + "/ok"), want: denied},
		{name: "fetch: 0.0.0.0 not granted", params: fetch("http://0.0.0.0:" + port + "/ok"), want: denied},
		{name: "fetch: redirect (control)", params: fetch("http://public.test:" + port + "/redirect?to=http://public.test:" + port + "/ok"), want: text("status 200: hello")},
		{name: "fetch: redirect to loopback IP", params: fetch("http://public.test:" + port + "/redirect?to=http://127.0.0.1:" + port + "/ok"), want: denied},
		{name: "fetch: redirect to a granted name resolving to loopback", params: fetch("http://public.test:" + port + "/redirect?to=http://loop.test:" + port + "/ok"), want: denied},
		{name: "fetch: redirect to metadata", params: fetch("http://public.test:" + port + "/redirect?to=http://169.254.169.254/latest/meta-data/"), want: denied},
		{name: "fetch: redirect to file://", params: fetch("http://public.test:" + port + "/redirect?to=file:///etc/passwd"), want: denied},

		// kv quota.
		{name: "kv: fill until the key quota", params: tool("kv_fill", map[string]any{"size": 10}), want: text("stored 50 keys, then errno -4 (too big)")},
		{name: "kv: fill until the byte quota", params: tool("kv_fill", map[string]any{"size": 100 << 10}), want: text("stored 10 keys, then errno -4 (too big)")},
		{name: "kv: one value over the value quota", params: tool("kv_big", map[string]any{"size": 300 << 10}), want: text("errno -4 (too big)")},

		// Floods.
		{name: "flood: 100,000 log lines", params: tool("flood_logs", map[string]any{"n": 100000, "size": 16}), want: text("done"), check: maxNotes(1000, 2<<20)},
		{name: "flood: 1,000 log lines of 1 MiB", params: tool("flood_logs", map[string]any{"n": 1000, "size": 1 << 20}), want: text("done"), check: maxNotes(1000, 2<<20)},
		{name: "flood: 100,000 structured logs", params: tool("flood_logdata", map[string]any{"n": 100000, "size": 16}), want: text("done"), check: maxNotes(1000, 2<<20)},
		{name: "flood: 200 structured logs of 1 MiB", params: tool("flood_logdata", map[string]any{"n": 200, "size": 1 << 20}), want: text("done"), check: maxNotes(1000, 2<<20)},
		{name: "flood: 100,000 progress notifications", params: withProgress(tool("flood_progress", map[string]any{"n": 100000})), want: text("done"), check: maxNotes(1000, 2<<20)},
		{name: "flood: 16 MiB of stdout and stderr", params: tool("flood_stdio", map[string]any{"n": 16 << 20}), want: text("done")},

		// Invalid and non-conforming results.
		{name: "result: truncated JSON", params: tool("garbage_notjson", nil), want: toolErr("invalid result")},
		{name: "result: invalid UTF-8", params: tool("garbage_utf8_bad", nil), want: toolErr("invalid result", "UTF-8")},
		{name: "result: content not an array", params: tool("garbage_shape", nil), want: toolErr("invalid result", "content is missing or not an array")},
		{name: "result: an array", params: tool("garbage_list_result", nil), want: toolErr("invalid result")},
		{name: "result: empty", params: tool("garbage_empty", nil), want: toolErr("invalid result")},
		{name: "result: trailing data", params: tool("garbage_trailing", nil), want: toolErr("invalid result")},
		{name: "result: 200,000 nested arrays", params: tool("garbage_deep", nil), want: toolErr("invalid result")},
		{name: "result: raw NUL in a string", params: tool("garbage_control_char", nil), want: toolErr("invalid result")},
		{name: "result: status 1 without an error object", params: tool("garbage_garbage_error", nil), want: toolErr("status 1 with an error that is not valid JSON")},
		{name: "result: status 7", params: tool("garbage_x_status", nil), want: toolErr("plugin failed (status 7)")},
		{name: "result: error object with invalid UTF-8", params: tool("garbage_bad_utf8_error", nil), want: toolErr("invalid result", "UTF-8")},
		{name: "result: input_required asking nothing", params: tool("garbage_input_required_empty", nil), want: toolErr("input_required without")},
		{name: "result: resources/read not a ReadResourceResult", method: "resources/read", params: map[string]any{"uri": "garbage://res"}, want: hostileWant{code: -32603, contains: []string{"contents is missing or not an array"}}},
		{name: "result: prompts/get not a GetPromptResult", method: "prompts/get", params: map[string]any{"name": "garbage_garbage_prompt"}, want: hostileWant{code: -32603, contains: []string{"messages is missing or not an array"}}},

		// A describe that changes into a lie after loading.
		{name: "describe lies after loading", params: tool("liar_relie", map[string]any{"manifest": `{"abi":1,"tools":[{"name":"bad name!"}]}`}), want: text("relied"),
			check: func(t *testing.T, r response, _ [][]byte) {
				time.Sleep(200 * time.Millisecond) // the re-describe runs in the background
				if got := decodeTool(t, callOK(t, "liar_ok")).text(); got != "ok" {
					t.Errorf("liar_ok after a bad re-describe: %q", got)
				}
				if tools := listTools(t); !strings.Contains(tools, `"liar_relie"`) || strings.Contains(tools, "bad name!") {
					t.Errorf("tools/list after a bad re-describe: %s", tools)
				}
			}},
	}
}

// callOK and listTools are set per server by TestHostilePlugins: a
// tools/call that must not fail at the protocol level, and tools/list.
var (
	callOK    func(t *testing.T, name string) response
	listTools func(t *testing.T) string
)

func withProgress(p map[string]any) map[string]any {
	p["_meta"] = map[string]any{"progressToken": "flood"}
	return p
}

// maxNotes checks that a call caused at most n notifications and at most
// size bytes of them.
func maxNotes(n, size int) func(t *testing.T, r response, notes [][]byte) {
	return func(t *testing.T, r response, notes [][]byte) {
		total := 0
		for _, b := range notes {
			total += len(b)
		}
		t.Logf("%d notifications, %d bytes", len(notes), total)
		if len(notes) > n {
			t.Errorf("%d notifications, want at most %d", len(notes), n)
		}
		if total > size {
			t.Errorf("%d bytes of notifications, want at most %d", total, size)
		}
	}
}

// TestHostilePlugins runs every case of the corpus through one server that
// also serves the good plugin.
func TestHostilePlugins(t *testing.T) {
	testutil.WallClock(t) // each hostile guest's answer is timed against its deadline, and its CPU against that time
	t.Setenv("HOSTILE_SECRET", "HOSTILE_SECRET")
	e := newHostileEnv(t)
	srv, err := newHostileServer(t, e, e.config(t))
	if err != nil {
		t.Fatal(err)
	}
	c := startSession(t, srv)
	if r := c.call("logging/setLevel", map[string]any{"level": "debug"}); r.Error != nil {
		t.Fatal(r.Error)
	}
	callOK = func(t *testing.T, name string) response {
		t.Helper()
		r := c.call("tools/call", tool(name, nil))
		if r.Error != nil {
			t.Fatalf("%s: %+v", name, r.Error)
		}
		return r
	}
	listTools = func(t *testing.T) string {
		t.Helper()
		r := c.call("tools/list", map[string]any{})
		if r.Error != nil {
			t.Fatalf("tools/list: %+v", r.Error)
		}
		return string(r.Result)
	}
	good := func(t *testing.T, tag string) {
		t.Helper()
		text := "still here after " + tag
		r := c.call("tools/call", tool("echo", map[string]any{"text": text}))
		if got := decodeTool(t, r); got.IsError || got.text() != text {
			t.Fatalf("good plugin after %s: %s", tag, r.Result)
		}
	}
	good(t, "loading")
	base := heapInuse()
	t.Logf("heap in use after loading: %d MiB", base>>20)

	for _, tc := range hostileCases(e) {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = "tools/call"
			}
			stopNotes := collectNotes(c)
			logged := e.logBytes.Load()
			mem := startMemWatch()
			cpu := guestCPU(srv)
			start := time.Now()
			r := c.call(method, tc.params)
			elapsed := time.Since(start)
			peak := mem.stop().peakHeap
			got := stopNotes()
			checkHostileAnswer(t, method, r, tc.want, elapsed)
			if ran := guestCPU(srv) - cpu; tc.want.idle && ran > elapsed/10 {
				t.Errorf("the guest ran %v of the call's %v: it should have slept", ran, elapsed)
			}
			if tc.check != nil {
				tc.check(t, r, got)
			}
			if n := e.logBytes.Load() - logged; n > maxCaseLog {
				t.Errorf("the server logged %d KiB, bound %d KiB", n>>10, maxCaseLog>>10)
			}
			good(t, tc.name)
			after := heapInuse()
			t.Logf("%v; heap peak %d MiB, after %d MiB", elapsed.Round(time.Millisecond), peak>>20, after>>20)
			if peak > maxCaseHeap {
				t.Errorf("heap in use peaked at %d MiB, bound %d MiB", peak>>20, maxCaseHeap>>20)
			}
			if after > base+maxHeapGrowth {
				t.Errorf("heap in use %d MiB after the case, %d MiB before the corpus", after>>20, base>>20)
			}
		})
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.dialed) > 0 {
		t.Errorf("http/fetch dialed refused addresses: %v", e.dialed)
	}
	// The other plugins' kv namespaces are untouched by kvfill.
	if got := decodeTool(t, c.call("tools/call", tool("counter", nil))).text(); got != "1" {
		t.Errorf("good counter = %q after kv exhaustion elsewhere, want 1", got)
	}
	t.Logf("server log: %d KiB in total", e.logBytes.Load()>>10)
}

// collectNotes drains the client's notifications until stop is called and
// returns them (the client's buffer is small next to a flood).
func collectNotes(c *stdioClient) func() [][]byte {
	// Drop what earlier cases left.
	for {
		select {
		case <-c.notes:
			continue
		default:
		}
		break
	}
	var (
		mu   sync.Mutex
		got  [][]byte
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			select {
			case n := <-c.notes:
				mu.Lock()
				got = append(got, n)
				mu.Unlock()
			case <-stop:
				// Take what is already queued, then stop.
				for {
					select {
					case n := <-c.notes:
						got = append(got, n)
					default:
						return
					}
				}
			}
		}
	}()
	return func() [][]byte {
		time.Sleep(20 * time.Millisecond)
		close(stop)
		<-done
		return got
	}
}

// checkHostileAnswer checks r against w.
func checkHostileAnswer(t *testing.T, method string, r response, w hostileWant, elapsed time.Duration) {
	t.Helper()
	all := string(r.Result)
	if r.Error != nil {
		all += r.Error.Message + string(r.Error.Data)
	}
	var tr toolResult
	if json.Unmarshal(r.Result, &tr) == nil {
		all += "\n" + tr.text() // decoded, for quotes and escapes
	}
	if !utf8.ValidString(all) {
		t.Errorf("answer is not valid UTF-8: %q", all)
	}
	switch {
	case w.timeout:
		if r.Error == nil || r.Error.Code != -32001 {
			t.Fatalf("want -32001 (timed out), got %s %+v", r.Result, r.Error)
		}
		var d struct {
			TimeoutMs int64 `json:"timeoutMs"`
		}
		if json.Unmarshal(r.Error.Data, &d) != nil || d.TimeoutMs <= 0 {
			t.Errorf("-32001 without data.timeoutMs: %s", r.Error.Data)
		}
		if limit := time.Duration(d.TimeoutMs)*time.Millisecond + time.Second; elapsed > limit {
			t.Errorf("answered after %v, deadline %dms", elapsed, d.TimeoutMs)
		}
	case w.code != 0:
		if r.Error == nil || r.Error.Code != w.code {
			t.Fatalf("want error %d, got %s %+v", w.code, r.Result, r.Error)
		}
	default:
		if r.Error != nil {
			t.Fatalf("unexpected error %d: %s %s", r.Error.Code, r.Error.Message, r.Error.Data)
		}
		if method == "tools/call" {
			if tr := decodeTool(t, r); tr.IsError != w.isError {
				t.Errorf("isError = %v, want %v (%s)", tr.IsError, w.isError, r.Result)
			}
		}
	}
	for _, s := range w.contains {
		if !strings.Contains(strings.ToLower(all), strings.ToLower(s)) {
			t.Errorf("answer %.300q does not contain %q", all, s)
		}
	}
	for _, s := range append(w.absent, "/tmp/", "/home/", "/root/") {
		if strings.Contains(all, s) {
			t.Errorf("answer %.300q contains %q", all, s)
		}
	}
}

// TestHostileDescribe loads the liar plugin with manifests that lie: a
// configured plugin fails New with a message naming the problem; the same
// file dropped in a plugin directory is skipped and the good plugin serves.
func TestHostileDescribe(t *testing.T) {
	e := newHostileEnv(t)
	long := strings.Repeat("x", 65)
	tests := []struct {
		name     string
		manifest string
		want     []string // in the load error
	}{
		{"schema that does not compile", `{"abi":1,"tools":[{"name":"t","inputSchema":{"type":12}}]}`, []string{`tool "t": inputSchema`}},
		{"outputSchema that does not compile", `{"abi":1,"tools":[{"name":"t","outputSchema":{"minimum":"x"}}]}`, []string{`tool "t": outputSchema`}},
		{"schema with a remote $ref", `{"abi":1,"tools":[{"name":"t","inputSchema":{"$ref":"http://169.254.169.254/schema.json"}}]}`, []string{`tool "t": inputSchema`}},
		{"schema not an object", `{"abi":1,"tools":[{"name":"t","inputSchema":"string"}]}`, []string{`tool "t": inputSchema`}},
		{"duplicate tool names", `{"abi":1,"tools":[{"name":"t"},{"name":"t"}]}`, []string{`duplicate tool name "t"`}},
		{"duplicate prompt names", `{"abi":1,"prompts":[{"name":"p"},{"name":"p"}]}`, []string{`duplicate prompt name "p"`}},
		{"duplicate resource URIs", `{"abi":1,"resources":[{"uri":"a://x","name":"a"},{"uri":"a://x","name":"b"}]}`, []string{`duplicate resource uri "a://x"`}},
		{"name with a space", `{"abi":1,"tools":[{"name":"bad name"}]}`, []string{`tool name "bad name" does not match`}},
		{"name with a dot", `{"abi":1,"tools":[{"name":"a.b"}]}`, []string{`tool name "a.b" does not match`}},
		{"name with a slash", `{"abi":1,"tools":[{"name":"../etc"}]}`, []string{`tool name "../etc" does not match`}},
		{"non-ASCII name", `{"abi":1,"tools":[{"name":"ünï"}]}`, []string{`does not match`}},
		{"name of 65 characters", `{"abi":1,"tools":[{"name":"` + long + `"}]}`, []string{`does not match`}},
		{"empty name", `{"abi":1,"tools":[{"name":""}]}`, []string{`"name" is empty`}},
		{"tool without a name", `{"abi":1,"tools":[{"description":"x"}]}`, []string{`missing "name"`}},
		{"prompt name unsafe", `{"abi":1,"prompts":[{"name":"a b"}]}`, []string{`prompt name "a b" does not match`}},
		{"bad URI template", `{"abi":1,"resourceTemplates":[{"uriTemplate":"a://{x","name":"t"}]}`, []string{"resourceTemplates[0]"}},
		{"name another plugin exposes", `{"abi":1,"tools":[{"name":"echo"}]}`, []string{`"echo"`, "good", "liar"}},
		{"not JSON", `{"abi":1,"tools":[`, []string{"manifest is not valid JSON"}},
		{"wrong ABI", `{"abi":2}`, []string{"manifest declares abi 2"}},
		{"describe traps", `@trap`, []string{"describe", "plugin crashed: unreachable"}},
		{"describe never answers", `@loop`, []string{"describe", "timed out"}},
		{"describe of 5 MiB", `@huge`, []string{"describe", "output exceeds"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Configured: New fails naming the problem.
			start := time.Now()
			_, err := newHostileServer(t, e, memKV+"[limits]\ntimeout = \"1s\"\n"+corpusTOML(t, "good")+
				corpusTOML(t, "liar", "[plugins.grants]", "config = { manifest = '"+tc.manifest+"' }"))
			checkRefused(t, err, tc.want...)
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("refusing took %v", el)
			}
		})
	}

	// In a plugin directory: skipped, the good plugin serves.
	dir := t.TempDir()
	copyCorpus(t, "liar", dir, "liar")
	srv, err := newHostileServer(t, e, memKV+"plugin_dirs = ["+quote(dir)+"]\n"+corpusTOML(t, "good"))
	if err != nil {
		t.Fatalf("a bad plugin in a directory stopped the server: %v", err)
	}
	c := startSession(t, srv)
	if got := decodeTool(t, c.call("tools/call", tool("echo", map[string]any{"text": "x"}))).text(); got != "x" {
		t.Errorf("good plugin: %q", got)
	}
}

// moduleRefusal is a corpus module the host refuses at load under limits,
// with an error containing every one of want.
type moduleRefusal struct {
	name, plugin, limits string
	want                 []string
}

// TestHostileLoadRefused: modules the host refuses before describing them.
func TestHostileLoadRefused(t *testing.T) {
	e := newHostileEnv(t)
	tests := []moduleRefusal{
		{"imports sockets", "socket", "", []string{"wasi_snapshot_preview1.sock_accept", "wasi_snapshot_preview1.sock_recv"}},
		{"minimum memory over the limit", "bigmin", `memory = "16MiB"`, []string{"memory limit", "below the module's minimum"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newHostileServer(t, e, memKV+pluginTOML("hostile", hostilePath(t, tc.plugin), tc.limits))
			checkRefused(t, err, tc.want...)
		})
	}
}

// TestHostileModuleRefused: modules that the instrumentation or the
// module limits must refuse are refused at load with an error naming the
// reason, both as a [[plugins]] entry (the server does not start) and
// dropped into plugin_dirs (the plugin is skipped and the others serve).
func TestHostileModuleRefused(t *testing.T) {
	e := newHostileEnv(t)
	tests := []moduleRefusal{
		{"writes the host's fuel global", "fuelwrite", "", []string{"global index 1 out of range", "malformed module"}},
		{"loops nested 3,000 deep", "nested", "", []string{"nesting of blocks, loops and ifs: 2049, over the limit of 2048 ([limits] max_nesting)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			limits := "[limits]\n" + tc.limits + "\n"
			_, err := newHostileServer(t, e, memKV+limits+pluginTOML("hostile", hostilePath(t, tc.plugin)))
			checkRefused(t, err, tc.want...)

			dir := t.TempDir()
			copyCorpus(t, tc.plugin, dir, tc.plugin)
			srv, err := newHostileServer(t, e, memKV+"plugin_dirs = ["+quote(dir)+"]\n"+limits+corpusTOML(t, "good"))
			if err != nil {
				t.Fatalf("a refused plugin in plugin_dirs stopped the server: %v", err)
			}
			c := startSession(t, srv)
			r := c.call("tools/list", map[string]any{})
			if r.Error != nil || !strings.Contains(string(r.Result), `"echo"`) || strings.Contains(string(r.Result), tc.plugin) {
				t.Fatalf("tools/list: %s %+v", r.Result, r.Error)
			}
			r = c.call("tools/call", tool("echo", map[string]any{"text": "served"}))
			if got := decodeTool(t, r); got.IsError || got.text() != "served" {
				t.Fatalf("good plugin: %s", r.Result)
			}
		})
	}
}

// TestHostileBulkDeadline: a loop around memory.fill of 64 MiB is charged
// by length, so it is stopped at its 1 s deadline, and while it runs the
// Go runtime's stop-the-world phases (runtime.GC here) and a good call on
// another plugin are not held up. Charged by code size alone, it ran
// thousands of fills between checks: seconds past its deadline, with the
// GC and every other call waiting as long. The bounds are generous
// factors, not timings.
func TestHostileBulkDeadline(t *testing.T) {
	testutil.WallClock(t) // a GC and a good call are timed while a guest fills memory in native code
	e := newHostileEnv(t)
	srv, err := newHostileServer(t, e, memKV+corpusTOML(t, "good")+
		corpusTOML(t, "bulk", `timeout = "1s"`, `memory = "80MiB"`, "instances = 1"))
	if err != nil {
		t.Fatal(err)
	}
	c := startSession(t, srv)
	type answer struct {
		r   response
		err error
		d   time.Duration
	}
	done := make(chan answer, 1)
	start := time.Now()
	go func() {
		r, err := c.tryCall("tools/call", tool("fill", nil), 2*time.Minute)
		done <- answer{r, err, time.Since(start)}
	}()
	time.Sleep(300 * time.Millisecond) // let the fill loop start
	t0 := time.Now()
	goruntime.GC()
	gc := time.Since(t0)
	t0 = time.Now()
	r := c.call("tools/call", tool("echo", map[string]any{"text": "meanwhile"}))
	good := time.Since(t0)
	if got := decodeTool(t, r); got.IsError || got.text() != "meanwhile" {
		t.Errorf("good plugin: %s", r.Result)
	}
	a := <-done
	t.Logf("fill answered after %v; a GC during it took %v, a good call %v", a.d.Round(time.Millisecond), gc.Round(time.Millisecond), good.Round(time.Millisecond))
	if a.err != nil {
		t.Fatal(a.err)
	}
	if a.r.Error == nil || a.r.Error.Code != -32001 {
		t.Errorf("fill: %s %+v, want -32001", a.r.Result, a.r.Error)
	}
	const margin = 4 * time.Second // the deadline is 1 s
	if a.d > time.Second+margin {
		t.Errorf("fill answered after %v, deadline 1s", a.d)
	}
	if gc > margin || good > margin {
		t.Errorf("while the fill ran, a GC took %v and a good call %v", gc, good)
	}
}

// TestHostileMountRace: two calls of the same plugin race its read-write
// mount. One renames the mount's sub away, a host-placed symlink out
// (dirlink -> ..) into its place and back, 20,000 times; the other opens,
// reads and stats sub/secret.txt and creates sub/created.txt, 300 times a
// call, until the first is done. sub never holds secret.txt, so any open
// or stat that works went out of the mount; checking a path and then
// reopening it by name let them through within the first call. A second
// copy of the plugin with the read-only mount gets EROFS for every write,
// and the good plugin answers throughout.
func TestHostileMountRace(t *testing.T) {
	e := newHostileEnv(t)
	p := hostilePath(t, "mountrace")
	srv, err := newHostileServer(t, e, memKV+corpusTOML(t, "good")+
		pluginTOML("race", p, `timeout = "20s"`, "instances = 2", "[plugins.grants]",
			"fs = [{ host = "+quote(e.rwmount)+`, guest = "/data", mode = "rw" }]`)+
		pluginTOML("ro", p, `prefix = "ro_"`, "[plugins.grants]", "fs = [{ host = "+quote(e.mount)+`, guest = "/data" }]`))
	if err != nil {
		t.Fatal(err)
	}
	c := startSession(t, srv)
	text := func(r response) string {
		t.Helper()
		if r.Error != nil {
			t.Fatalf("%+v", r.Error)
		}
		tr := decodeTool(t, r)
		if tr.IsError {
			t.Fatalf("tool error: %s", r.Result)
		}
		return tr.text()
	}
	type answer struct {
		r   response
		err error
	}
	swapped := make(chan answer, 1)
	go func() {
		r, err := c.tryCall("tools/call", tool("swap", nil), 2*time.Minute)
		swapped <- answer{r, err}
	}()
	var opens, reads, stats, made, calls int
	var swap answer
probing:
	for calls < 200 {
		select {
		case swap = <-swapped:
			break probing
		default:
		}
		var o, r, s, m int
		// tryCall: call reads the client's next id unlocked, a race
		// with the swap's request.
		pr, err := c.tryCall("tools/call", tool("probe", nil), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		got := text(pr)
		if _, err := fmt.Sscanf(got, "opens %d read %d stats %d made %d", &o, &r, &s, &m); err != nil {
			t.Fatalf("probe answered %q: %v", got, err)
		}
		opens, reads, stats, made, calls = opens+o, reads+r, stats+s, made+m, calls+1
	}
	if calls == 200 {
		swap = <-swapped
	}
	if swap.err != nil {
		t.Fatal(swap.err)
	}
	t.Logf("%d probe calls while the swap ran (%s): %d opens, %d reads of the secret, %d stats, %d files made inside",
		calls, text(swap.r), opens, reads, stats, made)
	if got := text(swap.r); got != "swapped 20000 failed 0" {
		t.Errorf("swap answered %q, want 20000 rounds without a failure", got)
	}
	if opens+reads+stats > 0 {
		t.Errorf("the plugin opened sub/secret.txt %d times (read the secret %d times) and stat'ed it %d times: outside its mount", opens, reads, stats)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "created.txt")); err == nil {
		t.Error("the plugin created a file outside its mount")
	}
	if calls == 0 || made == 0 {
		t.Errorf("%d probe calls made %d files: the race was not run", calls, made)
	}

	want := "create 69 write 69 mkdir 69 unlink 69 rmdir 69 rename 69 times 69 link 69 symlink 69 truncate 69 fdwrite 8"
	if got := text(c.call("tools/call", tool("ro_writes", nil))); got != want {
		t.Errorf("writes under a read-only mount:\n got %s\nwant %s", got, want)
	}
	if got := text(c.call("tools/call", tool("echo", map[string]any{"text": "still here"}))); got != "still here" {
		t.Errorf("good plugin: %q", got)
	}
}

// TestHostileTableGrow: tables are outside the memory limit, so the host
// caps their entries ([limits] max_table_elements, default 1Mi): a grow
// past it returns -1 to the guest instead of allocating (16Mi entries at
// once, or 64Ki at a time), the host's memory stays bounded, and the good
// plugin serves.
func TestHostileTableGrow(t *testing.T) {
	e := newHostileEnv(t)
	srv, err := newHostileServer(t, e, memKV+corpusTOML(t, "good")+corpusTOML(t, "tablegrow"))
	if err != nil {
		t.Fatal(err)
	}
	c := startSession(t, srv)
	before, peak := rss(), uint64(0)
	for _, tc := range []struct{ tool, want string }{
		{"big", "refused"},
		{"step", "refused after growing"},
		{"big", "refused"},
	} {
		mem := startMemWatch()
		r := c.call("tools/call", tool(tc.tool, nil))
		mem.stop()
		peak = max(peak, mem.peakRSS)
		if got := decodeTool(t, r); got.IsError || got.text() != tc.want {
			t.Errorf("%s: %s %+v, want %q", tc.tool, r.Result, r.Error, tc.want)
		}
		t.Logf("%s: %s", tc.tool, mem)
		r = c.call("tools/call", tool("echo", map[string]any{"text": "after " + tc.tool}))
		if got := decodeTool(t, r); got.IsError || got.text() != "after "+tc.tool {
			t.Errorf("good plugin: %s", r.Result)
		}
	}
	// 1Mi entries cost 8 MiB or so per instance (16Mi took 130 MiB of
	// heap, and growing until refused, gigabytes); generous for -race.
	if peak > before+192<<20 {
		t.Errorf("RSS peaked at %d MiB, %d MiB before the calls", peak>>20, before>>20)
	}
}

// TestHostileModuleLimits: each [limits] module limit refuses a module
// past it at load, with an error naming the value, the limit and the key
// (the good plugin under tight limits; its figures are in the wants), and
// compile_timeout gives up on a compile that takes too long.
func TestHostileModuleLimits(t *testing.T) {
	e := newHostileEnv(t)
	good, err := os.Stat(hostilePath(t, "good"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, plugin, limits string
		want                 string
	}{
		{"module size", "good", `max_module_size = "64KiB"`, fmt.Sprintf("over the module-size limit: %d bytes, limit 65536 ([limits] max_module_size)", good.Size())},
		{"functions", "good", "max_functions = 50", "functions: 87, over the limit of 50 ([limits] max_functions)"},
		{"function size", "good", `max_function_size = "4KiB"`, "over the limit of 4096 ([limits] max_function_size)"}, // the size itself moves with the C SDK
		{"locals", "good", "max_locals = 40", "locals: 43, over the limit of 40 ([limits] max_locals)"},
		{"nesting", "good", "max_nesting = 30", "nesting of blocks, loops and ifs: 31, over the limit of 30 ([limits] max_nesting)"},
		{"br_table", "good", "max_br_table = 50", "br_table targets in the function: 56, over the limit of 50 ([limits] max_br_table)"},
		{"globals", "../../examples/as-calc/as-calc", "max_globals = 20", "globals: 24, over the limit of 20 ([limits] max_globals)"},
		{"globals at the limit", "../../examples/as-calc/as-calc", "max_globals = 24", ""},
		{"segments", "good", "max_segments = 20", "data and element segments: 29, over the limit of 20 ([limits] max_segments)"},
		{"table at the limit", "tablegrow", "max_table_elements = 1", ""},
		{"compile timeout", "nested", "max_nesting = 10000\ncompile_timeout = \"1ms\"", "compiling took longer than 1ms ([limits] compile_timeout)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(memKV+"[limits]\n"+tc.limits+"\n"+pluginTOML("hostile", hostilePath(t, tc.plugin))), ".")
			if err != nil {
				t.Fatal(err)
			}
			cfg.Server.CacheDir = t.TempDir() // a cached compile would not time out
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			srv, err := New(context.Background(), cfg, Options{Version: "test", HTTP: e.policy()})
			took := time.Since(start)
			if tc.want == "" { // within the limit
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				srv.Close(context.Background())
				return
			}
			if err == nil {
				srv.Close(context.Background())
				t.Fatal("loaded")
			}
			t.Logf("refused after %v: %v", took.Round(time.Millisecond), err)
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("load error %q does not contain %q", err, tc.want)
			}
			if took > 20*time.Second {
				t.Errorf("refused after %v", took)
			}
		})
	}
}
