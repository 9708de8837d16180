package telemetry

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// postConn posts to one OTLP/HTTP endpoint over a connection it keeps
// alive between posts: an HTTP/1.1 client for one request at a time that
// writes the request's head and body in one writev, without copying the
// batch or allocating a buffer per post (net/http copies a request body
// through a 32 KiB buffer of its own each time, since its transport hides
// a bytes.Reader's WriteTo). Its caller serialises the posts.
type postConn struct {
	addr    string      // host:port
	tls     *tls.Config // nil for http
	head    []byte      // request line and headers, Content-Length last and unfinished
	timeout time.Duration

	c    net.Conn // nil until dialled, and after an error
	raw  net.Conn // the TCP connection of c
	br   *bufio.Reader
	hbuf []byte
	bufs net.Buffers
}

func newPostConn(u *url.URL, header http.Header, tc *tls.Config, timeout time.Duration) *postConn {
	p := &postConn{timeout: timeout}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	p.addr = net.JoinHostPort(u.Hostname(), port)
	if u.Scheme == "https" {
		p.tls = &tls.Config{MinVersion: tls.VersionTLS12}
		if tc != nil {
			p.tls = tc.Clone()
		}
		p.tls.ServerName = u.Hostname()
		p.tls.NextProtos = []string{"http/1.1"}
	}
	h := "POST " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: wasmcp\r\n"
	for k, vs := range header {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection":
			continue // this client's to set
		}
		for _, v := range vs {
			h += k + ": " + v + "\r\n"
		}
	}
	p.head = []byte(h + "Content-Length: ")
	return p
}

// validHeader reports whether k: v can be sent as a header field: k an
// HTTP token, v without a line break or NUL.
func validHeader(k, v string) bool {
	for i := range len(k) {
		if c := k[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return !strings.ContainsAny(v, "\r\n\x00")
}

// post posts body (its parts in order) and reads the response: nil for
// a 2xx status, else an *exportError or the network's error. A kept-alive
// connection the receiver closed while it was idle is redialled before
// the post (peerClosed), or after it if the request could not be written;
// a request written whole is not sent again here, since the receiver may
// have taken it (the export's retries are the OTLP retry policy's).
func (p *postConn) post(ctx context.Context, body [][]byte) error {
	if p.c != nil && peerClosed(p.raw, p.tls == nil) {
		p.close()
	}
	reused := p.c != nil
	written, err := p.roundTrip(ctx, body)
	if reused && !written && stale(err) && ctx.Err() == nil {
		_, err = p.roundTrip(ctx, body)
	}
	return err
}

// stale reports whether err is how a kept-alive connection its peer
// closed fails.
func stale(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

// roundTrip posts body over the connection, dialled first if need be;
// written reports whether the request was written whole.
func (p *postConn) roundTrip(ctx context.Context, body [][]byte) (written bool, err error) {
	if p.c == nil {
		if err := p.dial(ctx); err != nil {
			return false, fmt.Errorf("OTLP export: %w", err)
		}
	}
	c := p.c
	deadline := time.Now().Add(p.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	n := 0
	for _, b := range body {
		n += len(b)
	}
	p.hbuf = append(strconv.AppendInt(append(p.hbuf[:0], p.head...), int64(n), 10), "\r\n\r\n"...)
	p.bufs = append(append(p.bufs[:0], p.hbuf), body...)
	bufs := p.bufs // WriteTo consumes its receiver
	if _, err := bufs.WriteTo(c); err != nil {
		p.close()
		return false, fmt.Errorf("OTLP export: %w", err)
	}
	resp, err := http.ReadResponse(p.br, nil)
	if err != nil {
		p.close()
		return true, fmt.Errorf("OTLP export: %w", err)
	}
	err = readExportResponse(resp)
	if resp.Close || resp.ContentLength < 0 && resp.TransferEncoding == nil || p.br.Buffered() > 0 {
		p.close() // not reusable: closed by the receiver, its end unknown, or bytes after the response
	}
	return true, err
}

func (p *postConn) dial(ctx context.Context) error {
	d := net.Dialer{Timeout: p.timeout, KeepAlive: 30 * time.Second}
	c, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return err
	}
	p.raw = c
	if p.tls != nil {
		tc := tls.Client(c, p.tls)
		hctx, cancel := context.WithTimeout(ctx, p.timeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			c.Close()
			return err
		}
		c = tc
	}
	p.c = c
	if p.br == nil {
		p.br = bufio.NewReaderSize(c, 4<<10)
	} else {
		p.br.Reset(c)
	}
	return nil
}

// close closes the connection; the next post dials a new one.
func (p *postConn) close() {
	if p.c != nil {
		p.c.Close()
		p.c = nil
	}
}
