package mcp_test

import (
	"net/http"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

// memSessions is an in-process mcp.SessionStore, shared by the servers
// of one test.
type memSessions struct {
	mu sync.Mutex
	m  map[string]memSession
}

type memSession struct {
	state   []byte
	expires time.Time
}

func (s *memSessions) Save(id string, state []byte, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = memSession{append([]byte(nil), state...), time.Now().Add(ttl)}
	return nil
}

func (s *memSessions) Load(id string, ttl time.Duration, max int) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[id]
	if !ok || time.Now().After(v.expires) {
		return nil, false, nil
	}
	v.expires = time.Now().Add(ttl)
	s.m[id] = v
	return v.state[:min(len(v.state), max+1)], true, nil
}

func (s *memSessions) Delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	return nil
}

// memHub connects the servers of one test: each gets a Bus whose
// messages reach the others, in order, on a goroutine per subscriber.
type memHub struct {
	mu   sync.Mutex
	subs map[*memBus][]chan []byte
}

type memBus struct{ hub *memHub }

func (h *memHub) bus() *memBus { return &memBus{hub: h} }

func (b *memBus) Publish(msg []byte) error {
	b.hub.mu.Lock()
	defer b.hub.mu.Unlock()
	for other, chs := range b.hub.subs {
		if other == b {
			continue
		}
		for _, ch := range chs {
			ch <- append([]byte(nil), msg...)
		}
	}
	return nil
}

func (b *memBus) Subscribe(fn func([]byte)) func() {
	ch := make(chan []byte, 1024)
	b.hub.mu.Lock()
	b.hub.subs[b] = append(b.hub.subs[b], ch)
	b.hub.mu.Unlock()
	go func() {
		for m := range ch {
			fn(m)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.hub.mu.Lock()
			defer b.hub.mu.Unlock()
			chs := b.hub.subs[b]
			for i, c := range chs {
				if c == ch {
					b.hub.subs[b] = append(chs[:i], chs[i+1:]...)
					close(ch)
					break
				}
			}
		})
	}
}

// startShared starts n servers that share their legacy sessions.
func startShared(t *testing.T, n int) []*httpEnv {
	t.Helper()
	store := &memSessions{m: map[string]memSession{}}
	hub := &memHub{subs: map[*memBus][]chan []byte{}}
	var envs []*httpEnv
	for range n {
		envs = append(envs, startHTTPWith(t, &mcp.Options{Bus: hub.bus(), Sessions: store, SessionKey: []byte("shared-session-key-0123456789abcdef")}, &mcptest.Options{}, nil))
	}
	return envs
}

// TestHTTPSharedResumption checks that a request's stream closed by
// server A (SSE polling) is resumed with Last-Event-ID through server B,
// which relays its events from A up to the response; and that B refuses
// an event id A did not mint.
func TestHTTPSharedResumption(t *testing.T) {
	envs := startShared(t, 2)
	a, b := envs[0], envs[1]
	gate := make(chan struct{})
	a.prov.Gate = gate
	h := a.legacySession("2025-11-25", nil)
	resp := a.post(request(1, "tools/call", map[string]any{"name": "close_stream"}), h)
	evs := readSSE(t, resp.Body)
	resp.Body.Close()
	if len(evs) != 1 || evs[0].id == "" || strings.Count(evs[0].id, ".") != 3 {
		t.Fatalf("closed stream events = %+v, want one priming event with a shared event id", evs)
	}
	close(gate)
	get := b.do(http.MethodGet, map[string]string{"Mcp-Session-Id": h["Mcp-Session-Id"], "Last-Event-ID": evs[0].id})
	defer get.Body.Close()
	if get.StatusCode != 200 {
		t.Fatalf("resume on B: %d", get.StatusCode)
	}
	got := messages(t, get)
	if len(got) != 1 || string(got[0].ID) != "1" || textOf(t, got[0].Result) != "after close" {
		t.Fatalf("relayed %v", got)
	}
	parts := strings.Split(evs[0].id, ".")
	for _, bad := range []string{"1.1", parts[0] + ".AAAAAAAA.1.1", "x.y.z"} {
		r := b.do(http.MethodGet, map[string]string{"Mcp-Session-Id": h["Mcp-Session-Id"], "Last-Event-ID": bad})
		r.Body.Close()
		if r.StatusCode != http.StatusBadRequest {
			t.Errorf("Last-Event-ID %q on B: %d, want 400", bad, r.StatusCode)
		}
	}
}

// TestHTTPSharedSession checks the shared state without Redis: a
// subscription made through B is honoured by A's GET stream, and DELETE
// through A ends the session on B.
func TestHTTPSharedSession(t *testing.T) {
	envs := startShared(t, 2)
	a, b := envs[0], envs[1]
	h := a.legacySession("2025-11-25", nil)
	if m := lastMsg(t, b.post(request(2, "resources/subscribe", map[string]any{"uri": "mem://a"}), h)); m.Error != nil {
		t.Fatalf("subscribe on B: %s", m.raw)
	}
	get := a.do(http.MethodGet, map[string]string{"Mcp-Session-Id": h["Mcp-Session-Id"]})
	defer get.Body.Close()
	events := make(chan string, 64)
	go func() {
		defer close(events)
		rd := newSSEReader(get.Body)
		for {
			ev, ok := rd.next()
			if !ok {
				return
			}
			events <- ev.data
		}
	}()
	// A reloads the session's state when B announces the change: call
	// until the notification arrives.
	for deadline, delivered := time.Now().Add(10*time.Second), false; !delivered; {
		lastMsg(t, b.post(request(3, "tools/call", map[string]any{"name": "touch", "arguments": map[string]any{"uri": "mem://a"}}), h))
		select {
		case d := <-events:
			delivered = strings.Contains(d, "notifications/resources/updated") && strings.Contains(d, "mem://a")
		case <-time.After(200 * time.Millisecond):
		}
		if !delivered && time.Now().After(deadline) {
			t.Fatal("no resources/updated on A's GET stream within 10s")
		}
	}
	del := a.do(http.MethodDelete, map[string]string{"Mcp-Session-Id": h["Mcp-Session-Id"]})
	del.Body.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r := b.post(request(4, "ping", nil), h)
		r.Body.Close()
		if r.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B still serves the deleted session: %d", r.StatusCode)
		}
	}
}

// TestSharedSessionKeepsNoRecordCopy: a server holding shared sessions
// keeps a digest of each one's stored record, not a copy. Records
// planted in the store (2 MiB, invalid: refused by the size bound) for
// 40 sessions held here are read back before each session's next
// request, ignored (the session keeps serving) and not kept: on the
// code that kept the last record read, the heap grew by the 80 MiB
// planted.
func TestSharedSessionKeepsNoRecordCopy(t *testing.T) {
	store := &memSessions{m: map[string]memSession{}}
	hub := &memHub{subs: map[*memBus][]chan []byte{}}
	e := startHTTPWith(t, &mcp.Options{Bus: hub.bus(), Sessions: store, SessionKey: []byte("shared-session-key-0123456789abcdef")}, &mcptest.Options{}, nil)
	const sessions, planted = 40, 2 << 20
	var hdrs []map[string]string
	for range sessions {
		hdrs = append(hdrs, e.legacySession("2025-11-25", nil))
	}
	big := []byte(`{"v":"2025-11-25","ll":0,"cc":{"x":"` + strings.Repeat("a", planted) + `"}}`)
	store.mu.Lock()
	for _, h := range hdrs {
		id := h["Mcp-Session-Id"]
		store.m[id] = memSession{big, time.Now().Add(time.Hour)} // one array, shared by every entry
	}
	store.mu.Unlock()
	before := heapAfterGC()
	for i, h := range hdrs {
		if m := lastMsg(t, e.post(request(i+1, "ping", nil), h)); m.Error != nil {
			t.Fatalf("ping of session %d after its record was planted: %s", i, m.raw)
		}
	}
	grown := int64(heapAfterGC()) - int64(before)
	t.Logf("heap grew by %d KiB for %d sessions that read back a %d KiB record", grown>>10, sessions, planted>>10)
	if grown > 16<<20 {
		t.Errorf("heap grew by %d MiB: the sessions keep copies of the records read back", grown>>20)
	}
}

func heapAfterGC() uint64 {
	var ms goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
