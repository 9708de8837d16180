// Package audit writes the audit trail: one JSON event per line (the
// schema is the Event type), through a bounded queue drained by
// one writer goroutine, so that a sink that cannot keep up never blocks a
// call; events it cannot take are counted, never silently lost.
package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Event types.
const (
	TypeToolCall          = "mcp_tool_call"
	TypeResourceRead      = "mcp_resource_read"
	TypePromptGet         = "mcp_prompt_get"
	TypeAuthzDenied       = "authz_denied"
	TypeCapabilityDenied  = "capability_denied"
	TypeDefinitionChanged = "definition_changed"
)

// Subject is who made the call.
type Subject struct {
	// Sub is the verified token's subject, "stdio" on stdio, empty when
	// auth is off.
	Sub string `json:"sub,omitempty"`
	// ClientName and ClientVersion are what the client said in initialize.
	ClientName    string `json:"client_name,omitempty"`
	ClientVersion string `json:"client_version,omitempty"`
}

// Target is what the call was about.
type Target struct {
	Plugin string `json:"plugin,omitempty"`
	// Name is the tool or prompt name, or the resource URI.
	Name   string `json:"name,omitempty"`
	Method string `json:"method,omitempty"`
}

// Event is one audit record.
type Event struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Time      time.Time `json:"time"`
	Outcome   string    `json:"outcome"`
	Source    string    `json:"source,omitempty"`
	Transport string    `json:"transport,omitempty"`
	Subject   Subject   `json:"subject"`
	Target    Target    `json:"target"`
	// DurationMS is how long the call took, in milliseconds.
	DurationMS float64 `json:"duration_ms"`
	// Detail is a short human-readable reason (denials, changes).
	Detail   string          `json:"detail,omitempty"`
	Request  json.RawMessage `json:"request,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
	// Truncated is set when Request or Response was cut at max_data.
	Truncated bool `json:"truncated,omitempty"`
}

// Options configure a Logger.
type Options struct {
	// File is the sink: a path, or "-" / "stderr" for standard error.
	File string
	// MaxSize is the size past which the file is rotated (0: 64 MiB).
	MaxSize int64
	// MaxFiles is how many rotated files are kept (0: 5).
	MaxFiles int
	// IncludeData keeps request and response data in events.
	IncludeData bool
	// MaxData caps each of request and response data, in bytes (0: 4 KiB).
	MaxData int
	// Queue is the queue's length (0: 4096), and QueueBytes the most
	// bytes of encoded events it holds (0: 16 MiB): an event past either
	// is dropped and counted, so that a stalled sink costs a bounded
	// amount of memory whatever max_data is.
	Queue      int
	QueueBytes int64
	// OnDrop, if set, is called once for every event the queue could not take.
	OnDrop func()
}

// Logger is an audit trail. Its methods are safe for concurrent use; a nil
// Logger records nothing.
type Logger struct {
	opts    Options
	q       chan []byte
	done    chan struct{}
	dropped atomic.Uint64
	queued  atomic.Int64 // bytes of the events in q and being written
	closing sync.Once
	w       io.Writer
	f       *os.File // nil for stderr
	size    int64
	err     error
}

// Open opens the sink and starts the writer goroutine.
func Open(o Options) (*Logger, error) {
	if o.MaxSize <= 0 {
		o.MaxSize = 64 << 20
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = 5
	}
	if o.MaxData <= 0 {
		o.MaxData = 4 << 10
	}
	if o.Queue <= 0 {
		o.Queue = 4096
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = 16 << 20
	}
	l := &Logger{opts: o, q: make(chan []byte, o.Queue), done: make(chan struct{})}
	switch o.File {
	case "":
		return nil, errors.New("audit: no file (a path, or \"-\" for stderr)")
	case "-", "stderr":
		l.w = os.Stderr
	default:
		if err := l.openFile(); err != nil {
			return nil, err
		}
	}
	go l.run()
	return l, nil
}

func (l *Logger) openFile() error {
	// O_NONBLOCK: a FIFO nobody reads fails to open (ENXIO) instead of
	// holding the server's start; it changes nothing for a regular file,
	// and writes to a FIFO still wait (in the writer goroutine).
	f, err := os.OpenFile(l.opts.File, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if errors.Is(err, syscall.ENXIO) {
		return fmt.Errorf("audit: %s is a FIFO that no process reads: %w", l.opts.File, err)
	}
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit: %w", err)
	}
	l.f, l.w = f, f
	if st.Mode().IsRegular() {
		l.size = st.Size()
	}
	return nil
}

// rotate renames file.N-1 to file.N down to file to file.1, and reopens.
func (l *Logger) rotate() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	base := l.opts.File
	for i := l.opts.MaxFiles - 1; i >= 1; i-- {
		if err := os.Rename(base+"."+strconv.Itoa(i), base+"."+strconv.Itoa(i+1)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("audit: %w", err)
		}
	}
	if err := os.Rename(base, base+".1"); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	l.size = 0
	return l.openFile()
}

func (l *Logger) run() {
	defer close(l.done)
	for line := range l.q {
		if l.f != nil && l.size > 0 && l.size+int64(len(line)) > l.opts.MaxSize {
			if st, err := l.f.Stat(); err == nil && st.Mode().IsRegular() {
				if err := l.rotate(); err != nil {
					l.err = err
				}
			}
		}
		n, err := l.w.Write(line)
		l.queued.Add(-int64(len(line)))
		l.size += int64(n)
		if err != nil && l.err == nil {
			l.err = fmt.Errorf("audit: %w", err)
		}
	}
	if l.f != nil {
		if err := l.f.Close(); err != nil && l.err == nil {
			l.err = fmt.Errorf("audit: %w", err)
		}
	}
}

// IncludeData reports whether events carry request and response data.
func (l *Logger) IncludeData() bool { return l != nil && l.opts.IncludeData }

// Log fills in the event's id and time (if unset), redacts and caps its
// data, and queues it; it never waits. It reports whether the event was
// queued: false means it was counted as dropped.
func (l *Logger) Log(e Event) bool {
	if l == nil {
		return false
	}
	if e.ID == "" {
		e.ID = NewID()
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	if l.opts.IncludeData {
		var cut1, cut2 bool
		e.Request, cut1 = capData(Redact(e.Request), l.opts.MaxData)
		e.Response, cut2 = capData(Redact(e.Response), l.opts.MaxData)
		e.Truncated = e.Truncated || cut1 || cut2
	} else {
		e.Request, e.Response = nil, nil
	}
	line, err := json.Marshal(e)
	if err != nil { // only data that is not JSON; keep the event without it
		e.Request, e.Response = nil, nil
		line, _ = json.Marshal(e)
	}
	line = append(line, '\n')
	if n := int64(len(line)); l.queued.Add(n) > l.opts.QueueBytes {
		l.queued.Add(-n)
	} else {
		select {
		case l.q <- line:
			return true
		default:
			l.queued.Add(-n)
		}
	}
	l.dropped.Add(1)
	if l.opts.OnDrop != nil {
		l.opts.OnDrop()
	}
	return false
}

// Dropped is how many events the queue could not take.
func (l *Logger) Dropped() uint64 {
	if l == nil {
		return 0
	}
	return l.dropped.Load()
}

// Close stops taking events, writes those queued and closes the sink, or
// gives up when ctx is done (a sink that does not drain).
func (l *Logger) Close(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.closing.Do(func() { close(l.q) })
	select {
	case <-l.done:
		return l.err
	case <-ctx.Done():
		return fmt.Errorf("audit: closing: %w", ctx.Err())
	}
}

// NewID returns a random 128-bit event id in hex.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

var secretKey = regexp.MustCompile(`(?i)password|secret|token|key`)

// Redacted replaces the values of redacted keys.
const Redacted = "[REDACTED]"

// Redact returns data with the value of every object key matching
// password, secret, token or key (any case, at any depth) replaced by
// Redacted. Data that is not JSON is returned as a JSON string.
func Redact(data json.RawMessage) json.RawMessage {
	if len(data) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		s, _ := json.Marshal(string(data))
		return s
	}
	out, err := json.Marshal(redact(v))
	if err != nil {
		return nil
	}
	return out
}

func redact(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if secretKey.MatchString(k) {
				t[k] = Redacted
			} else {
				t[k] = redact(x)
			}
		}
	case []any:
		for i, x := range t {
			t[i] = redact(x)
		}
	}
	return v
}

// capData keeps data whole if it fits in max bytes, else a JSON string of
// its first bytes.
func capData(data json.RawMessage, max int) (json.RawMessage, bool) {
	if len(data) <= max {
		return data, false
	}
	s, _ := json.Marshal(string(data[:max]))
	return s, true
}
