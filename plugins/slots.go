package plugins

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// loadSlots hands out a Reload's load slots (GOMAXPROCS of them: loading
// is CPU-bound): first to the loads a call is waiting for (a plugin
// listed from its cached manifest, see early.go), then to the smallest
// modules, then in spec order, so that the most plugins are ready the
// soonest and a client's first call does not wait behind the others.
type loadSlots struct {
	mu      sync.Mutex
	free    int
	waiting []*slotWait
}

// slotWait is one load's place in the queue.
type slotWait struct {
	urgent bool // a call waits for it
	size   int  // of the module
	order  int  // in the specs
	grant  chan struct{}
}

// loadSlotHold bounds how long one load keeps its slot: a plugin whose
// describe hangs until its timeout must not hold back the others (two
// such plugins on 2 cores kept every other plugin from loading until
// they timed out; TestHostileSlowLoad).
const loadSlotHold = 250 * time.Millisecond

func newLoadSlots(n int) *loadSlots { return &loadSlots{free: max(1, n)} }

// acquire returns once w holds a slot.
func (s *loadSlots) acquire(w *slotWait) {
	s.mu.Lock()
	if s.free > 0 && len(s.waiting) == 0 {
		s.free--
		s.mu.Unlock()
		return
	}
	w.grant = make(chan struct{})
	s.waiting = append(s.waiting, w)
	s.mu.Unlock()
	<-w.grant
}

// release gives a slot back, to the first load waiting if any.
func (s *loadSlots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiting) == 0 {
		s.free++
		return
	}
	i := 0
	for j, w := range s.waiting {
		if before(w, s.waiting[i]) {
			i = j
		}
	}
	w := s.waiting[i]
	s.waiting = slices.Delete(s.waiting, i, i+1)
	close(w.grant)
}

// before orders waiting loads: urgent ones, then smaller, then earlier.
func before(a, b *slotWait) bool {
	if a.urgent != b.urgent {
		return a.urgent
	}
	if c := cmp.Compare(a.size, b.size); c != 0 {
		return c < 0
	}
	return a.order < b.order
}

// hurry puts w first among the loads waiting (a call waits for it).
func (s *loadSlots) hurry(w *slotWait) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.urgent = true
}
