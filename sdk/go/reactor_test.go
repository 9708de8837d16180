package wasmcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
	wruntime "github.com/wasmcp/wasmcp/runtime"
)

// buildPlugin builds the Go plugin in testdata/dir for wasip1 and returns
// its bytes.
func buildPlugin(t *testing.T, dir string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), dir+".wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, "./testdata/"+dir)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// nopHost logs nothing and denies every host call.
type nopHost struct{}

func (nopHost) Log(context.Context, int32, []byte) {}
func (nopHost) Call(context.Context, string, []byte) ([]byte, int32) {
	return nil, -1
}

// TestReactorMemory calls an SDK plugin thousands of times on one instance,
// with requests, answers and garbage of several sizes, and checks that the
// instance is never replaced: its linear memory stays under the 32 MiB
// recycling threshold (the SDK's decoders must not retain what a call
// leaves behind). The large cases make fewer calls: a 1 MiB call costs a
// Go guest about 0.1 s.
func TestReactorMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasip1 plugin")
	}
	ctx := context.Background()
	wasm := buildPlugin(t, "memplugin")
	cache := os.Getenv("WASMCP_TEST_CACHE")
	e, err := wruntime.NewEngine(ctx, wruntime.Config{CacheDir: cache, NoCache: cache == "", Modules: wruntime.ModuleLimits{CompileTimeout: testutil.CompileTimeout}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	m, err := e.Compile(ctx, "memplugin", wasm)
	if err != nil {
		t.Fatal(err)
	}
	// A 1 MiB call costs a Go guest tens of milliseconds (most of it the
	// collection wasmcpCall runs after a large call), so the large cases
	// make fewer calls; MEMTEST_N sets one count for all of them.
	override := -1
	if v, err := strconv.Atoi(os.Getenv("MEMTEST_N")); err == nil {
		override = v
	}
	for _, tc := range []struct {
		name          string
		data, garbage int
		echo          bool
		n             int
	}{
		{"1MiB echo", 1 << 20, 0, true, 60},
		{"1MiB requests", 1 << 20, 0, false, 60},
		{"200KiB requests", 200 << 10, 0, false, 200},
		{"small requests, 1MiB garbage", 10, 1 << 20, false, 2000},
		{"small requests, 100KiB garbage", 10, 100 << 10, false, 10000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.n
			if override >= 0 {
				n = override
			}
			recycle := uint64(32)
			if v, err := strconv.Atoi(os.Getenv("MEMTEST_RECYCLE")); err == nil {
				recycle = uint64(v)
			}
			// The deadline is generous: this test is about memory, and a
			// 1 MiB call under -race on a loaded machine takes seconds.
			p, err := m.NewPool(wruntime.Limits{Instances: 1, Memory: 64 << 20, RecycleMemory: recycle << 20, Timeout: 2 * time.Minute}, wruntime.Sandbox{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			args, _ := json.Marshal(map[string]any{os.Getenv("MEMTEST_KEY") + "data": strings.Repeat("x", tc.data), "garbage": tc.garbage, "echo": tc.echo})
			env := []byte(`{"method":"tools/call","params":{"name":"size","arguments":` + string(args) + `},"context":{"protocolVersion":"2025-11-25"}}`)
			want := `{"content":[{"type":"text","text":"` + strconv.Itoa(tc.data) + `"}]}`
			if tc.echo {
				want = `{"content":[{"type":"text","text":"` + strings.Repeat("x", tc.data) + `"}]}`
			}
			if os.Getenv("MEMTEST_KEY") != "" {
				want = `{"content":[{"type":"text","text":"0"}]}`
			}
			start := time.Now()
			var slowest time.Duration
			for i := range n {
				t0 := time.Now()
				status, out, err := p.Call(ctx, env, nopHost{}, nil)
				if err != nil || status != 0 || string(out) != want {
					t.Fatalf("call %d: status %d, %v: %.200s", i, status, err, out)
				}
				slowest = max(slowest, time.Since(t0))
			}
			s := p.Stats()
			t.Logf("%d calls in %v (%v/call, slowest %v): %+v", n, time.Since(start), time.Since(start)/time.Duration(n), slowest, s)
			if s.Created != 1 || s.Recycled != 0 || s.Discarded != 0 {
				t.Errorf("instance replaced: %+v (linear memory past 32 MiB)", s)
			}
		})
	}
}
