// Package redistest starts a real redis-server on a free loopback port
// for a test, and stops and restarts it to test what happens while Redis
// is away. A test run where redis-server is not installed is skipped,
// or fails when WASMCP_REQUIRE_TOOLCHAINS is set (as CI sets it).
package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is one redis-server process owned by a test.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int

	mu     sync.Mutex
	proc   *os.Process // nil while stopped
	exited chan error  // receives the exit of proc
}

// Start starts redis-server on a free port of 127.0.0.1, without
// persistence, and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redis-server is not installed (scripts/install-deps.sh installs it)"
		if os.Getenv("WASMCP_REQUIRE_TOOLCHAINS") != "" {
			t.Fatal(msg + " (WASMCP_REQUIRE_TOOLCHAINS is set)")
		}
		t.Skip(msg)
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir()}
	var last error
	for range 5 {
		s.port, err = freePort()
		if err != nil {
			t.Fatal(err)
		}
		if last = s.start(); last == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatalf("redis-server: %v", last)
	return nil
}

// URL is the server's redis:// URL, database 0.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Stop kills the server and waits for it to exit; its data is lost.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	_ = s.proc.Kill()
	<-s.exited
	s.proc = nil
}

// Restart starts the server again on the same port after Stop.
func (s *Server) Restart() {
	s.t.Helper()
	var err error
	for range 50 { // the port may take a moment to be free again
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("restart redis-server: %v", err)
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return nil
	}
	log := filepath.Join(s.dir, "redis.log")
	cmd := exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--logfile", log, "--daemonize", "no",
		"--protected-mode", "yes")
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			data, _ := os.ReadFile(log)
			return fmt.Errorf("exited (%v): %s", err, lastLines(string(data), 3))
		default:
		}
		if ping(s.Addr()) == nil {
			s.proc, s.exited = cmd.Process, exited
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	<-exited
	return fmt.Errorf("not answering PING on %s after 10s", s.Addr())
}

// ping sends PING and expects +PONG.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Do sends one command to the server and returns its reply: a simple
// string, a bulk string ("" for nil), an integer in decimal, or the
// elements of an array joined by newlines. A Redis error reply is
// returned as an error. Tests use it to look at, or plant, what the
// server stores.
func (s *Server) Do(args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	return readReply(bufio.NewReader(c))
}

// readReply reads one RESP2 reply.
func readReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("redistest: empty reply line")
	}
	switch body := line[1:]; line[0] {
	case '+', ':':
		return body, nil
	case '-':
		return "", fmt.Errorf("redis: %s", body)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return "", err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return "", err
		}
		var out []string
		for range n {
			v, err := readReply(r)
			if err != nil {
				return "", err
			}
			out = append(out, v)
		}
		return strings.Join(out, "\n"), nil
	}
	return "", fmt.Errorf("redistest: unexpected reply %q", line)
}
