package tasks

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Memory is the in-process Store: tasks live in a map and are gone when
// the process ends. Create sweeps expired tasks from time to time, and
// Expire sweeps them all.
type Memory struct {
	lim Limits

	mu      sync.Mutex
	tasks   map[string]*Task
	live    int
	bytes   int64
	byOwner map[string]*owner
	creates int
}

type owner struct {
	ids   map[string]struct{}
	live  int
	bytes int64
}

// NewMemory returns an empty Memory store with the caps lim.
func NewMemory(lim Limits) *Memory {
	return &Memory{lim: lim, tasks: map[string]*Task{}, byOwner: map[string]*owner{}}
}

var _ Store = (*Memory)(nil)

// Create implements Store.
func (m *Memory) Create(_ context.Context, t *Task) (*Task, error) {
	if !t.Status.Valid() || t.Status.Terminal() {
		return nil, fmt.Errorf("tasks: create with status %q: want working or input_required", t.Status)
	}
	if t.TTL <= 0 {
		return nil, fmt.Errorf("tasks: create with ttl %v: want a positive ttl", t.TTL)
	}
	now := Now()
	c := t.Clone()
	c.ID = NewID()
	c.CreatedAt, c.UpdatedAt = now, now
	c.ExpiresAt = now.Add(c.TTL)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.creates++; m.creates%64 == 0 {
		m.expireLocked(now)
	}
	o := m.byOwner[c.Principal]
	switch {
	case m.lim.MaxLive > 0 && m.live >= m.lim.MaxLive:
		return nil, fmt.Errorf("%w (%d)", ErrTooManyTotal, m.lim.MaxLive)
	case m.lim.MaxLivePerPrincipal > 0 && o != nil && o.live >= m.lim.MaxLivePerPrincipal:
		return nil, fmt.Errorf("%w (%d)", ErrTooManyForPrincipal, m.lim.MaxLivePerPrincipal)
	}
	size := c.Size()
	if err := m.budgetLocked(o, size); err != nil {
		return nil, err
	}
	if o == nil {
		o = &owner{ids: map[string]struct{}{}}
		m.byOwner[c.Principal] = o
	}
	o.ids[c.ID] = struct{}{}
	o.live++
	m.live++
	o.bytes += size
	m.bytes += size
	m.tasks[c.ID] = c
	return c.Clone(), nil
}

// getLocked returns the stored task (not a copy) or ErrNotFound.
func (m *Memory) getLocked(principal, id string, now time.Time) (*Task, error) {
	t := m.tasks[id]
	if t == nil || t.Principal != principal {
		return nil, ErrNotFound
	}
	if !now.Before(t.ExpiresAt) {
		m.dropLocked(t)
		return nil, ErrNotFound
	}
	return t, nil
}

// budgetLocked reports whether size more bytes for owner o (nil: none
// yet) fit the byte budgets, with the Create error (matching ErrTooMany).
func (m *Memory) budgetLocked(o *owner, size int64) error {
	var used int64
	if o != nil {
		used = o.bytes
	}
	switch {
	case m.lim.MaxBytes > 0 && m.bytes+size > m.lim.MaxBytes:
		return fmt.Errorf("%w (%d bytes held, budget %d)", ErrBytesTotal, m.bytes, m.lim.MaxBytes)
	case m.lim.MaxBytesPerPrincipal > 0 && used+size > m.lim.MaxBytesPerPrincipal:
		return fmt.Errorf("%w (%d bytes held, budget %d)", ErrBytesForPrincipal, used, m.lim.MaxBytesPerPrincipal)
	}
	return nil
}

// growLocked reports whether owner o may grow by delta bytes, with the
// Update error (matching ErrOverBudget).
func (m *Memory) growLocked(o *owner, delta int64) error {
	switch {
	case delta <= 0:
		return nil
	case m.lim.MaxBytesPerPrincipal > 0 && o.bytes+delta > m.lim.MaxBytesPerPrincipal:
		return OverBudget(true, delta, o.bytes, m.lim.MaxBytesPerPrincipal)
	case m.lim.MaxBytes > 0 && m.bytes+delta > m.lim.MaxBytes:
		return OverBudget(false, delta, m.bytes, m.lim.MaxBytes)
	}
	return nil
}

func (m *Memory) dropLocked(t *Task) {
	delete(m.tasks, t.ID)
	o := m.byOwner[t.Principal]
	delete(o.ids, t.ID)
	o.bytes -= t.Size()
	m.bytes -= t.Size()
	if !t.Status.Terminal() {
		o.live--
		m.live--
	}
	if len(o.ids) == 0 {
		delete(m.byOwner, t.Principal)
	}
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, principal, id string) (*Task, error) {
	return m.withTask(principal, id, func(t *Task) (*Task, error) { return t.Clone(), nil })
}

// withTask runs fn on the stored task (not a copy) under the lock, or
// answers ErrNotFound as getLocked does.
func (m *Memory) withTask(principal, id string, fn func(*Task) (*Task, error)) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.getLocked(principal, id, time.Now())
	if err != nil {
		return nil, err
	}
	return fn(t)
}

// Update implements Store.
func (m *Memory) Update(_ context.Context, principal, id string, fn func(*Task) error) (*Task, error) {
	return m.withTask(principal, id, func(t *Task) (*Task, error) {
		c := t.Clone()
		if err := fn(c); err != nil {
			return nil, err
		}
		if err := checkUpdate(t, c); err != nil {
			return nil, err
		}
		if err := m.growLocked(m.byOwner[t.Principal], c.Size()-t.Size()); err != nil {
			return nil, err
		}
		m.storeLocked(t, c)
		return c.Clone(), nil
	})
}

// checkUpdate enforces what an update may not change.
func checkUpdate(old, c *Task) error {
	if c.ID != old.ID || c.Principal != old.Principal || !c.CreatedAt.Equal(old.CreatedAt) ||
		c.TTL != old.TTL || !c.ExpiresAt.Equal(old.ExpiresAt) {
		return errors.New("tasks: update changed the id, principal, creation time or ttl")
	}
	if !c.Status.Valid() {
		return fmt.Errorf("tasks: update to status %q", c.Status)
	}
	if old.Status.Terminal() && c.Status != old.Status {
		return ErrTerminal
	}
	return nil
}

// storeLocked replaces old by c, keeping the live counts and bytes.
func (m *Memory) storeLocked(old, c *Task) {
	c.UpdatedAt = Now()
	d := c.Size() - old.Size()
	m.byOwner[c.Principal].bytes += d
	m.bytes += d
	if !old.Status.Terminal() && c.Status.Terminal() {
		m.byOwner[c.Principal].live--
		m.live--
	}
	m.tasks[c.ID] = c
}

// Cancel implements Store.
func (m *Memory) Cancel(_ context.Context, principal, id string) (*Task, error) {
	return m.withTask(principal, id, func(t *Task) (*Task, error) {
		if t.Status.Terminal() {
			return t.Clone(), nil
		}
		c := t.Clone()
		c.Status, c.StatusMessage = Cancelled, "cancelled by the client"
		c.InputRequests, c.InputResponses = nil, nil
		m.storeLocked(t, c)
		return c.Clone(), nil
	})
}

// List implements Store.
func (m *Memory) List(_ context.Context, principal, cursor string, limit int) ([]*Task, string, error) {
	var after struct {
		at time.Time
		id string
		ok bool
	}
	if cursor != "" {
		at, id, err := DecodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		after.at, after.id, after.ok = at, id, true
	}
	if limit <= 0 {
		limit = 50
	}
	now := time.Now()
	m.mu.Lock()
	var all []*Task
	if o := m.byOwner[principal]; o != nil {
		for id := range o.ids {
			t := m.tasks[id]
			if now.Before(t.ExpiresAt) {
				all = append(all, t)
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return less(all[i].CreatedAt, all[i].ID, all[j].CreatedAt, all[j].ID) })
	var page []*Task
	for _, t := range all {
		if after.ok && !less(after.at, after.id, t.CreatedAt, t.ID) {
			continue
		}
		if len(page) == limit {
			break
		}
		page = append(page, t.Clone())
	}
	more := len(page) == limit && len(all) > 0 && all[len(all)-1].ID != page[len(page)-1].ID
	m.mu.Unlock()
	next := ""
	if more {
		last := page[len(page)-1]
		next = EncodeCursor(last.CreatedAt, last.ID)
	}
	return page, next, nil
}

func less(at1 time.Time, id1 string, at2 time.Time, id2 string) bool {
	if !at1.Equal(at2) {
		return at1.Before(at2)
	}
	return id1 < id2
}

// EncodeCursor returns the List cursor that continues after the task
// created at with id (stores order tasks by creation, then id).
func EncodeCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixMilli(), 10) + "." + id))
}

// DecodeCursor reverses EncodeCursor: the creation time and id a cursor
// continues after. It fails with ErrBadCursor.
func DecodeCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", ErrBadCursor
	}
	ms, id, ok := strings.Cut(string(b), ".")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", ErrBadCursor
	}
	return time.UnixMilli(n).UTC(), id, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, principal, id string) error {
	_, err := m.withTask(principal, id, func(t *Task) (*Task, error) {
		m.dropLocked(t)
		return nil, nil
	})
	return err
}

// Expire implements Store.
func (m *Memory) Expire(_ context.Context, now time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.expireLocked(now), nil
}

func (m *Memory) expireLocked(now time.Time) int {
	n := 0
	for _, t := range m.tasks {
		if !now.Before(t.ExpiresAt) {
			m.dropLocked(t)
			n++
		}
	}
	return n
}
