package server

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// BenchmarkAuthzToolCall is one tools/call over stdio to a warm C plugin
// (c-hash base64_encode), one at a time, with no [authz] and with the 20
// rules of internal/authz/testdata/bench20.cedar (the call allowed by one
// permit and checked by every rule), with arguments no policy reads and
// with a path argument that some read (converted, and a context built,
// on every call). The difference of each pair is what the policies cost
// a call; cpu-ns/op is the figure to compare on a machine shared with
// other work.
//
//	go test -run XXX -bench AuthzToolCall -benchmem -count 5 ./internal/server/
func BenchmarkAuthzToolCall(b *testing.B) {
	policies, err := filepath.Abs("../authz/testdata/bench20.cedar")
	if err != nil {
		b.Fatal(err)
	}
	rules := "[authz]\npolicies = " + `"` + policies + `"` + "\n"
	for _, tc := range []struct{ name, authz, args string }{
		{"none", "", `{"text":"hi"}`},
		{"20-rules", rules, `{"text":"hi"}`},
		// An argument the policies read: converted, and the context
		// built, on every call.
		{"none-path", "", `{"text":"hi","path":"/tmp/ok/a"}`},
		{"20-rules-path", rules, `{"text":"hi","path":"/tmp/ok/a"}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv := newTestServer(b, testLimits+tc.authz+`
[[plugins]]
name = "hash"
path = "../../../examples/c-hash/c-hash.wasm"
`)
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- srv.ServeStdio(context.Background(), inR, outW)
				outW.Close()
			}()
			defer func() {
				inW.Close()
				testutil.AwaitReturn(b, done, 10*time.Second, "ServeStdio (stdin closed)")
			}()
			r, w := bufio.NewReader(outR), bufio.NewWriter(inW)
			w.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
			w.Flush()
			if _, err := r.ReadSlice('\n'); err != nil {
				b.Fatal(err)
			}
			suffix := `,"method":"tools/call","params":{"name":"base64_encode","arguments":` + tc.args + `}}` + "\n"
			cpu := testutil.CPUTime()
			testutil.BenchStdioCalls(b, r, w, 1, suffix)
			testutil.ReportCPU(b, cpu)
		})
	}
}
