package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{`{"Password":"x","b":2}`, `{"Password":"[REDACTED]","b":2}`},
		{`{"api_KEY":"x"}`, `{"api_KEY":"[REDACTED]"}`},
		{`{"n":{"refreshToken":{"x":1}}}`, `{"n":{"refreshToken":"[REDACTED]"}}`},
		{`[{"client_secret":"s"},{"ok":"token"}]`, `[{"client_secret":"[REDACTED]"},{"ok":"token"}]`},
		{`not json`, `"not json"`},
	} {
		if got := string(Redact(json.RawMessage(c.in))); got != c.want {
			t.Errorf("Redact(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func countIDs(t *testing.T, files []string) map[string]int {
	t.Helper()
	ids := map[string]int{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var e Event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("%s: %v: %q", f, err, sc.Text())
			}
			ids[e.ID]++
		}
		fh.Close()
	}
	return ids
}

// TestRotationLosesNothing: concurrent writers, a small max_size and
// enough files to hold everything; every id is found exactly once.
func TestRotationLosesNothing(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "audit.jsonl")
	const writers, each = 8, 250
	l, err := Open(Options{File: file, MaxSize: 16 << 10, MaxFiles: 100, Queue: writers * each})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if !l.Log(Event{Type: TypeToolCall, Outcome: "ok", Target: Target{Plugin: "p", Name: "t", Method: "tools/call"}, Subject: Subject{Sub: string(rune('a' + w))}}) {
					t.Error("dropped")
				}
			}
		}()
	}
	wg.Wait()
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	files := []string{file}
	for i := 1; i <= 100; i++ {
		files = append(files, file+"."+itoa(i))
	}
	ids := countIDs(t, files)
	if len(ids) != writers*each {
		t.Fatalf("%d ids, want %d", len(ids), writers*each)
	}
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("id %s seen %d times", id, n)
		}
	}
	if _, err := os.Stat(file + ".2"); err != nil {
		t.Fatalf("no rotation happened: %v", err)
	}
	if _, err := os.Stat(file + ".101"); err == nil {
		t.Fatal("more files than max_files")
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestRotationKeepsMaxFiles: old files past max_files are discarded.
func TestRotationKeepsMaxFiles(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(Options{File: file, MaxSize: 1024, MaxFiles: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		l.Log(Event{Type: TypeToolCall, Outcome: "ok"})
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{file, file + ".1", file + ".2"} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(file + ".3"); err == nil {
		t.Error("audit.jsonl.3 kept past max_files = 2")
	}
}

// TestStalledSink: a FIFO nobody reads. Opening it for writing would
// block, so a reader opens it once and never reads; Log must not block
// and must count drops.
func TestStalledSink(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var hook int
	var mu sync.Mutex
	l, err := Open(Options{File: fifo, Queue: 16, OnDrop: func() { mu.Lock(); hook++; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		big := json.RawMessage(`"` + string(make([]byte, 0)) + `"`)
		for range 100000 {
			l.Log(Event{Type: TypeToolCall, Outcome: "ok", Detail: string(make([]byte, 512)), Request: big})
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		t.Fatal("Log blocked on a stalled sink")
	}
	if l.Dropped() == 0 {
		t.Fatal("no drop counted though nobody reads the FIFO")
	}
	mu.Lock()
	if uint64(hook) != l.Dropped() {
		t.Errorf("OnDrop called %d times, Dropped = %d", hook, l.Dropped())
	}
	mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := l.Close(ctx); err == nil {
		t.Error("Close of a stalled sink reported success")
	}
}

func TestDataCapAndOff(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a.jsonl")
	l, err := Open(Options{File: file, IncludeData: true, MaxData: 16})
	if err != nil {
		t.Fatal(err)
	}
	l.Log(Event{Type: TypeToolCall, Request: json.RawMessage(`{"token":"abc","x":"0123456789012345678901234567890"}`)})
	l.Close(context.Background())
	b, _ := os.ReadFile(file)
	var e Event
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if !e.Truncated || len(e.Request) > 40 {
		t.Errorf("request not capped: %s", e.Request)
	}
	if e.Time.Location() != time.UTC || e.ID == "" {
		t.Errorf("time %v id %q", e.Time, e.ID)
	}
}

// TestFIFOWithoutReader: opening a FIFO nobody reads is a clear error,
// not a wait for a reader.
func TestFIFOWithoutReader(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		l, err := Open(Options{File: fifo})
		if err == nil {
			l.Close(context.Background())
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no process reads") {
			t.Fatalf("Open = %v, want the FIFO named as unread", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Open waits for a reader of the FIFO")
	}
}

// TestQueueBytes: behind a stalled sink the queue holds at most
// QueueBytes of events, however few they are: 1000 events of 8 KiB fit
// the queue's 4096 places but not its 64 KiB, and are dropped, counted.
func TestQueueBytes(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l, err := Open(Options{File: fifo, QueueBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	detail := string(make([]byte, 8<<10))
	peak := int64(0)
	for range 1000 {
		l.Log(Event{Type: TypeToolCall, Outcome: "ok", Detail: detail})
		peak = max(peak, l.queued.Load())
	}
	if peak > 64<<10 {
		t.Errorf("%d bytes queued, over the 64 KiB bound", peak)
	}
	if d := l.Dropped(); d < 900 {
		t.Errorf("%d of 1000 events dropped; the pipe and the queue hold far fewer than 100", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	l.Close(ctx)
}
