package httpguard

import (
	"slices"
	"testing"
)

// FuzzFramer feeds connection bytes to the request framer whole and in
// two pieces: it must not panic, and where the bytes are split must not
// change what it sees.
func FuzzFramer(f *testing.F) {
	f.Add([]byte("POST /mcp HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}GET / HTTP/1.1\r\n\r\n"), 10)
	f.Add([]byte("POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n2;x\r\n{}\r\n0\r\nT: 1\r\n\r\n"), 50)
	f.Add([]byte("\r\n\r\nPOST /mcp HTTP/1.0\nTransfer-Encoding: chunked\nContent-Length: 1\n\nx"), 3)
	f.Add([]byte("POST /mcp HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), 0)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		var whole, parts framer
		whole.feed(data)
		if split < 0 {
			split = -split
		}
		if len(data) > 0 {
			split %= len(data) + 1
		} else {
			split = 0
		}
		parts.feed(data[:split])
		parts.feed(data[split:])
		if whole.lost != parts.lost || !slices.Equal(whole.verdicts, parts.verdicts) {
			t.Fatalf("split at %d: %v %v, whole: %v %v", split, parts.lost, parts.verdicts, whole.lost, whole.verdicts)
		}
		if !whole.lost && whole.state != parts.state {
			t.Fatalf("split at %d: state %d, whole %d", split, parts.state, whole.state)
		}
	})
}

func TestFramer(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  []framed
		lost  bool
		state int
	}{
		{"both", "POST /a HTTP/1.1\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", []framed{{"POST", "/a", true}}, false, fStart},
		{"pipelined", "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /b?x HTTP/1.1\r\n\r\n", []framed{{"POST", "/a", false}, {"GET", "/b?x", false}}, false, fStart},
		{"chunked body hides nothing", "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1a\r\nGET /x HTTP/1.1\r\nA: b\r\n\r\n\r\n0\r\n\r\n", []framed{{"POST", "/a", false}}, false, fStart},
		{"HTTP/1.0 ignores TE", "POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\nx", []framed{{"POST", "/a", true}}, false, fStart},
		{"bad chunk size", "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", []framed{{"POST", "/a", false}}, true, fChunkSize},
		{"differing lengths", "POST /a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", nil, true, fHeader},
		{"bad request line", "POST /a\r\n\r\n", nil, true, fRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f framer
			f.feed([]byte(tt.in))
			if !slices.Equal(f.verdicts, tt.want) || f.lost != tt.lost || f.state != tt.state {
				t.Fatalf("verdicts %v lost %v state %d, want %v %v %d", f.verdicts, f.lost, f.state, tt.want, tt.lost, tt.state)
			}
		})
	}
}
