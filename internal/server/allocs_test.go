package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// TestStdioCallAllocs bounds the heap allocations of one tools/call over
// stdio to a warm C plugin, end to end: the engine (admission, the call,
// the response), the provider, the registry and the runtime (the client
// side here writes and reads fixed bytes, and allocates nothing). Every
// allocation costs its own time and a share of the collector's, which runs
// tens of times a second under load (issue 15). The bound is generous
// (today's count plus a margin): it catches a per-call closure, map or
// copy coming back, not a single word.
func TestStdioCallAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	srv := newTestServer(t, testLimits+`
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
	t.Cleanup(func() {
		inW.Close()
		testutil.AwaitReturn(t, done, 10*time.Second, "ServeStdio (stdin closed)")
	})
	br := bufio.NewReader(outR)
	roundTrip := func(line []byte) []byte {
		if _, err := inW.Write(line); err != nil {
			t.Fatal(err)
		}
		resp, err := br.ReadSlice('\n')
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	roundTrip([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"))
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"base64_encode","arguments":{"text":"hi"}}}` + "\n")
	if resp := roundTrip(call); !bytes.Contains(resp, []byte(`"aGk="`)) {
		t.Fatalf("tools/call: %s", resp)
	}
	const maxAllocs = 11 // 8 when written, 18 the day before
	if n := testing.AllocsPerRun(2000, func() { roundTrip(call) }); n > maxAllocs {
		t.Errorf("a tools/call allocates %.1f objects, want at most %d", n, maxAllocs)
	} else {
		t.Logf("a tools/call allocates %.1f objects", n)
	}
}
