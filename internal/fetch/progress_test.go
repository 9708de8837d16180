package fetch

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// pacedReader returns n chunks of size bytes, each after a wait of
// every: a download at a known pace.
type pacedReader struct {
	n, size int
	every   time.Duration
}

func (r *pacedReader) Read(b []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	time.Sleep(r.every)
	r.n--
	return copy(b, make([]byte, min(r.size, len(b)))), nil
}

// TestProgressLines (on a fake clock): a download prints nothing during
// its first second, then a line once a second, and a last one when it
// ends; one done within a second prints nothing at all.
func TestProgressLines(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name  string
		r     pacedReader
		lines []string
	}{
		{"quick", pacedReader{n: 9, size: mib, every: 100 * time.Millisecond}, nil},
		{"just under a second", pacedReader{n: 1, size: mib, every: time.Second - time.Nanosecond}, nil},
		{"slow", pacedReader{n: 5, size: mib, every: 500 * time.Millisecond}, []string{
			"wasmcp: downloading x: 2.0 MiB in 1s",
			"wasmcp: downloading x: 4.0 MiB in 2s",
			"wasmcp: downloaded x: 5.0 MiB in 2s", // 2.5 s, rounded half to even
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var out bytes.Buffer
				// Reads of a chunk each: a plain writer, a buffer as large.
				if _, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, newProgress(&tc.r, &out, "x", 0), make([]byte, mib)); err != nil {
					t.Fatal(err)
				}
				var got []string
				if s := strings.TrimSuffix(out.String(), "\n"); s != "" {
					got = strings.Split(s, "\n")
				}
				if strings.Join(got, "|") != strings.Join(tc.lines, "|") {
					t.Errorf("progress lines %q, want %q", got, tc.lines)
				}
			})
		})
	}
}
