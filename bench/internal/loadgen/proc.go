package loadgen

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// Proc is a server process under test, with its stdio connected to pipes.
type Proc struct {
	Cmd     *exec.Cmd
	Stdin   io.WriteCloser
	Stdout  io.ReadCloser
	Started time.Time // just before the process was started

	mu       sync.Mutex
	tail     []string // last lines of stderr
	url      chan string
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
}

var urlRE = regexp.MustCompile(`https?://[^\s"']+`)

// StartProc starts args as a process. Its stderr is kept (the last lines,
// for error messages) and, if verbose, copied to this process's stderr.
func StartProc(args []string, verbose bool) (*Proc, error) {
	if len(args) == 0 {
		return nil, errors.New("no server command given")
	}
	cmd := exec.Command(args[0], args[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	p := &Proc{Cmd: cmd, Stdin: stdin, Stdout: stdout, url: make(chan string, 1), exited: make(chan struct{})}
	p.Started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 4096), 1<<20)
		found := false
		for sc.Scan() {
			line := sc.Text()
			if verbose {
				fmt.Fprintf(os.Stderr, "[%s] %s\n", args[0], line)
			}
			p.mu.Lock()
			p.tail = append(p.tail, line)
			if len(p.tail) > 20 {
				p.tail = p.tail[1:]
			}
			p.mu.Unlock()
			if !found {
				if u := urlRE.FindString(line); u != "" {
					found = true
					p.url <- u
				}
			}
		}
	}()
	go func() {
		<-stderrDone
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.exited)
	}()
	return p, nil
}

// WaitURL returns the first URL the process printed on stderr.
func (p *Proc) WaitURL(timeout time.Duration) (string, error) {
	select {
	case u := <-p.url:
		return u, nil
	case <-p.exited:
		return "", fmt.Errorf("server exited before printing its URL: %v%s", p.waitErr, p.StderrTail())
	case <-time.After(timeout):
		return "", fmt.Errorf("server printed no URL within %v%s", timeout, p.StderrTail())
	}
}

// CPU returns the CPU time the process has used so far.
func (p *Proc) CPU() (time.Duration, error) { return ProcCPU(p.Cmd.Process.Pid) }

// StderrTail returns the last lines of the process's stderr, for errors.
func (p *Proc) StderrTail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.tail) == 0 {
		return ""
	}
	s := "\nserver stderr (last lines):"
	for _, l := range p.tail {
		s += "\n  " + l
	}
	return s
}

// Stop closes the process's stdin and waits for it to exit, sending
// SIGTERM and then SIGKILL if it does not.
func (p *Proc) Stop() {
	p.stopOnce.Do(func() {
		p.Stdin.Close()
		select {
		case <-p.exited:
			return
		case <-time.After(2 * time.Second):
		}
		p.Cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
			return
		case <-time.After(2 * time.Second):
		}
		p.Cmd.Process.Kill()
		<-p.exited
	})
}

// Kill kills the process at once and waits for it.
func (p *Proc) Kill() {
	p.stopOnce.Do(func() {
		p.Cmd.Process.Kill()
		<-p.exited
	})
}
