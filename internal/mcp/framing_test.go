package mcp_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// discoverRequest is a raw HTTP/1.1 server/discover POST with the given
// framing headers and body.
func discoverRequest(framing, body string) string {
	var b strings.Builder
	b.WriteString("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n")
	for k, v := range modernHeaders("server/discover", "") {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString(framing + "\r\n" + body)
	return b.String()
}

func chunked(s string) string { return fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(s), s) }

// TestHTTPContentLengthAndTransferEncoding sends requests that carry both
// framing headers (request smuggling behind a proxy, RFC 9112 §6.1): each
// is refused with 400 and its connection closed, while requests with one
// framing header are served on a kept-alive connection.
func TestHTTPContentLengthAndTransferEncoding(t *testing.T) {
	e := startRun(t, nil, nil)
	body := modernBody(1, "server/discover", nil, nil)
	smuggled := "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
	tests := []struct {
		name    string
		framing string
		body    string
	}{
		{"CL then TE", fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n", len(chunked(body))), chunked(body)},
		{"TE then CL", fmt.Sprintf("Transfer-Encoding: chunked\r\nContent-Length: %d\r\n", len(chunked(body))), chunked(body)},
		{"lower case, CL.TE smuggling", "content-length: 4\r\ntransfer-encoding: chunked\r\n", "0\r\n\r\n" + smuggled},
		{"after a good request", fmt.Sprintf("Content-Length: %d\r\nTRANSFER-ENCODING: chunked\r\n", len(chunked(body))), chunked(body)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", e.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			c.SetDeadline(time.Now().Add(wait))
			if strings.HasPrefix(tt.name, "after") {
				io.WriteString(c, discoverRequest(fmt.Sprintf("Content-Length: %d\r\n", len(body)), body))
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				if resp.StatusCode != 200 || resp.Close {
					t.Fatalf("good request: %d close=%v", resp.StatusCode, resp.Close)
				}
			}
			io.WriteString(c, discoverRequest(tt.framing, tt.body))
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "Transfer-Encoding") {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			rest, _ := readUntilClosed(t, c, 5*time.Second)
			if rest2, _ := io.ReadAll(br); len(rest)+len(rest2) > 0 {
				t.Fatalf("the server answered more on the connection: %q %q", rest2, rest)
			}
		})
	}
	t.Run("one framing header each, kept alive", func(t *testing.T) {
		c, err := net.Dial("tcp", e.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(wait))
		br := bufio.NewReader(c)
		// Pipelined: chunked, Content-Length, chunked with extensions
		// and a trailer.
		io.WriteString(c, discoverRequest("Transfer-Encoding: chunked\r\n", chunked(body))+
			discoverRequest(fmt.Sprintf("Content-Length: %d\r\n", len(body)), body)+
			discoverRequest("Transfer-Encoding: chunked\r\n", fmt.Sprintf("%x;ext=1\r\n%s\r\n0\r\nX-Trailer: 1\r\n\r\n", len(body), body)))
		for i := range 3 {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("response %d: %v", i, err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || resp.Close {
				t.Fatalf("response %d: %d close=%v %s", i, resp.StatusCode, resp.Close, b)
			}
		}
	})
}
