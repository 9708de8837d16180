package httpguard_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/httpguard"
)

const wait = 10 * time.Second

// serve runs an http.Server behind the guard, answering every request it
// is handed with its body; it returns the server's address.
func serve(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	})
	srv := &http.Server{Handler: httpguard.Handler(echo, nil), ConnContext: httpguard.ConnContext}
	go srv.Serve(httpguard.Listener(ln))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// post is a raw HTTP/1.1 POST with the given framing headers and body.
func post(framing, body string) string {
	return "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + framing + "\r\n" + body
}

func chunked(s string) string { return fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(s), s) }

// TestContentLengthAndTransferEncoding sends requests that carry both
// framing headers (request smuggling behind a proxy, RFC 9112 §6.1): each
// is refused with 400 and its connection closed, while requests with one
// framing header are served on a kept-alive connection.
func TestContentLengthAndTransferEncoding(t *testing.T) {
	addr := serve(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	smuggled := "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
	tests := []struct {
		name    string
		after   bool // sent after a good request on the same connection
		framing string
		body    string
	}{
		{"CL then TE", false, fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n", len(chunked(body))), chunked(body)},
		{"TE then CL", false, fmt.Sprintf("Transfer-Encoding: chunked\r\nContent-Length: %d\r\n", len(chunked(body))), chunked(body)},
		{"lower case, CL.TE smuggling", false, "content-length: 4\r\ntransfer-encoding: chunked\r\n", "0\r\n\r\n" + smuggled},
		{"after a good request", true, fmt.Sprintf("Content-Length: %d\r\nTRANSFER-ENCODING: chunked\r\n", len(chunked(body))), chunked(body)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			c.SetDeadline(time.Now().Add(wait))
			if tt.after {
				io.WriteString(c, post(fmt.Sprintf("Content-Length: %d\r\n", len(body)), body))
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				if resp.StatusCode != 200 || resp.Close {
					t.Fatalf("good request: %d close=%v", resp.StatusCode, resp.Close)
				}
			}
			io.WriteString(c, post(tt.framing, tt.body))
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusBadRequest || !resp.Close || !bytes.Contains(b, []byte("Transfer-Encoding")) {
				t.Fatalf("status %d close=%v: %s", resp.StatusCode, resp.Close, b)
			}
			if rest, err := io.ReadAll(br); len(rest) > 0 || err != nil {
				t.Fatalf("the server answered more on the connection: %q %v", rest, err)
			}
		})
	}
	t.Run("one framing header each, kept alive", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(wait))
		br := bufio.NewReader(c)
		// Pipelined: chunked, Content-Length, chunked with extensions
		// and a trailer.
		io.WriteString(c, post("Transfer-Encoding: chunked\r\n", chunked(body))+
			post(fmt.Sprintf("Content-Length: %d\r\n", len(body)), body)+
			post("Transfer-Encoding: chunked\r\n", fmt.Sprintf("%x;ext=1\r\n%s\r\n0\r\nX-Trailer: 1\r\n\r\n", len(body), body)))
		for i := range 3 {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("response %d: %v", i, err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || resp.Close || string(b) != body {
				t.Fatalf("response %d: %d close=%v %s", i, resp.StatusCode, resp.Close, b)
			}
		}
	})
}
