package httpguard

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
)

// framer follows the HTTP/1.x requests read on one connection.
type framer struct {
	mu       sync.Mutex
	state    int
	line     []byte // the current header or chunk line
	method   string
	target   string
	cl, te   bool
	clen     int64
	http10   bool
	left     int64 // body or chunk bytes still to come
	verdicts []framed
	lost     bool
}

// framed is what the framer saw of one request.
type framed struct {
	method, target string
	both           bool // Content-Length and Transfer-Encoding
}

const (
	fStart     = iota // before a request line (leading CR/LF are skipped)
	fRequest          // in the request line
	fHeader           // in a header line
	fBody             // in a Content-Length body
	fChunkSize        // in a chunk-size line
	fChunkData        // in chunk data
	fChunkEnd         // the CRLF after chunk data
	fTrailer          // in a trailer line
)

// Bounds of what the framer follows; past them the connection is closed
// after its current request (net/http refuses longer header lines, and
// chunk lines are short).
const (
	maxFramedLine    = 1 << 20
	maxFramedPending = 32
)

// feed follows the bytes b just read from the connection.
func (f *framer) feed(b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(b) > 0 && !f.lost {
		switch f.state {
		case fStart:
			if b[0] == '\r' || b[0] == '\n' {
				b = b[1:]
				continue
			}
			f.state = fRequest
		case fBody, fChunkData:
			n := int64(len(b))
			if n > f.left {
				n = f.left
			}
			b = b[n:]
			f.left -= n
			if f.left == 0 {
				if f.state == fBody {
					f.state = fStart
				} else {
					f.state = fChunkEnd
				}
			}
			continue
		}
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			f.line = append(f.line, b...)
			if len(f.line) > maxFramedLine {
				f.lost = true
			}
			return
		}
		f.line = append(f.line, b[:i]...)
		b = b[i+1:]
		line := bytes.TrimSuffix(f.line, []byte{'\r'})
		f.endLine(line)
		f.line = f.line[:0]
	}
}

// endLine handles one complete line (without its line ending).
func (f *framer) endLine(line []byte) {
	switch f.state {
	case fRequest:
		parts := bytes.Split(line, []byte{' '})
		if len(parts) != 3 {
			f.lost = true
			return
		}
		f.method, f.target = string(parts[0]), string(parts[1])
		f.http10 = string(parts[2]) == "HTTP/1.0"
		f.cl, f.te, f.clen = false, false, 0
		f.state = fHeader
	case fHeader:
		if len(line) == 0 {
			f.endHeaders()
			return
		}
		if line[0] == ' ' || line[0] == '\t' {
			return // a continuation: it changes no header name
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			f.lost = true
			return
		}
		switch {
		case asciiEqualFold(name, "content-length"):
			n, err := strconv.ParseInt(string(bytes.Trim(value, " \t")), 10, 64)
			if err != nil || n < 0 || (f.cl && n != f.clen) {
				f.lost = true
				return
			}
			f.cl, f.clen = true, n
		case asciiEqualFold(name, "transfer-encoding"):
			f.te = true
		}
	case fChunkSize:
		size, _, _ := bytes.Cut(line, []byte{';'})
		size = bytes.TrimRight(size, " \t")
		n, err := strconv.ParseUint(string(size), 16, 63)
		if err != nil || len(size) == 0 {
			f.lost = true
			return
		}
		if n == 0 {
			f.state = fTrailer
			return
		}
		f.left, f.state = int64(n), fChunkData
	case fChunkEnd:
		if len(line) != 0 {
			f.lost = true
			return
		}
		f.state = fChunkSize
	case fTrailer:
		if len(line) == 0 {
			f.state = fStart
		}
	}
}

// endHeaders records the request and follows its body.
func (f *framer) endHeaders() {
	if len(f.verdicts) >= maxFramedPending {
		f.lost = true
		return
	}
	f.verdicts = append(f.verdicts, framed{method: f.method, target: f.target, both: f.cl && f.te})
	switch {
	case f.te && !f.http10: // net/http ignores Transfer-Encoding on HTTP/1.0
		f.state = fChunkSize
	case f.cl && f.clen > 0:
		f.state, f.left = fBody, f.clen
	default:
		f.state = fStart
	}
}

// take returns what the framer saw of request r, the next one on its
// connection; ok is false when the framing was not followed.
func (f *framer) take(r *http.Request) (v framed, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.verdicts) > 0 {
		v = f.verdicts[0]
		f.verdicts = f.verdicts[1:]
		if v.method == r.Method && v.target == r.RequestURI {
			return v, !f.lost
		}
		// A request net/http answered without the handler (OPTIONS *).
	}
	return framed{}, false
}

func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// framerConn feeds what is read from a connection to its framer.
type framerConn struct {
	net.Conn
	f framer
}

// Read implements net.Conn.
func (c *framerConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.f.feed(b[:n])
	}
	return n, err
}

// Listener returns ln with the bytes of each connection it accepts
// followed by the guard.
func Listener(ln net.Listener) net.Listener { return listener{ln} }

// listener wraps the connections it accepts in framerConns.
type listener struct{ net.Listener }

// Accept implements net.Listener.
func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &framerConn{Conn: c}, nil
}

type framerKey struct{}

// ConnContext is the http.Server ConnContext that hands each request on
// connection c (one Listener accepted) what the guard follows of c.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if fc, ok := c.(*framerConn); ok {
		return context.WithValue(ctx, framerKey{}, &fc.f)
	}
	return ctx
}

// Handler returns next behind the guard: a request that carried both
// Content-Length and Transfer-Encoding is answered by refuse, with
// Connection: close already set, and next never sees it (refuse nil: a
// plain-text 400); a request after which the connection's bytes can no
// longer be followed goes to next with Connection: close set.
func Handler(next, refuse http.Handler) http.Handler {
	if refuse == nil {
		refuse = http.HandlerFunc(refuseText)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, _ := r.Context().Value(framerKey{}).(*framer)
		if f != nil && r.ProtoMajor == 1 {
			v, ok := f.take(r)
			if v.both {
				w.Header().Set("Connection", "close")
				refuse.ServeHTTP(w, r)
				return
			}
			if !ok {
				w.Header().Set("Connection", "close")
			}
		}
		next.ServeHTTP(w, r)
	})
}

func refuseText(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "both Content-Length and Transfer-Encoding (RFC 9112 §6.1)", http.StatusBadRequest)
}
