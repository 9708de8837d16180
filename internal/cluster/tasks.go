package cluster

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wasmcp/wasmcp/internal/tasks"
)

// Tasks is the task store in Redis (tasks.Store): every replica reads
// and updates the same records, so tasks/get, tasks/cancel and
// tasks/result work on any of them. A task is one JSON value; sorted sets
// index it by owner (creation order, for List), by expiry (for Expire),
// and while it is live (for the caps). Create, Delete and Expire are Lua
// scripts; Update is compare-and-set on the JSON value, retried when
// another replica changed the task meanwhile. All keys share one hash
// tag, so a Redis Cluster keeps them on one shard. Expiry follows the
// replicas' clocks (ExpiresAt); Redis drops a task's value a minute after
// it as garbage collection.
type Tasks struct {
	c   *Cluster
	lim tasks.Limits
	p   string // key prefix
}

var _ tasks.Store = (*Tasks)(nil)

// Tasks returns the task store in Redis with the caps lim.
func (c *Cluster) Tasks(lim tasks.Limits) *Tasks {
	return &Tasks{c: c, lim: lim, p: "{wasmcp:tasks}"}
}

const tasksLib = `
local P = ARGV[1]
local function unbill(ph, id)
  local sz = tonumber(redis.call('HGET', P .. ':size', id) or '0')
  if sz ~= 0 then
    redis.call('HDEL', P .. ':size', id)
    if redis.call('HINCRBY', P .. ':bytes', ph, -sz) <= 0 then redis.call('HDEL', P .. ':bytes', ph) end
    redis.call('HINCRBY', P .. ':bytes', '*', -sz)
  end
end
-- over(ph, delta, maxBytes, maxPer): 0 when delta more bytes fit, else
-- -4 (per owner) or -5 (total), and the bytes held.
local function over(ph, delta, maxBytes, maxPer)
  if delta <= 0 then return 0, 0 end
  local mine = tonumber(redis.call('HGET', P .. ':bytes', ph) or '0')
  if maxPer > 0 and mine + delta > maxPer then return -4, mine end
  local all = tonumber(redis.call('HGET', P .. ':bytes', '*') or '0')
  if maxBytes > 0 and all + delta > maxBytes then return -5, all end
  return 0, 0
end
local function bill(ph, id, size)
  local old = tonumber(redis.call('HGET', P .. ':size', id) or '0')
  redis.call('HSET', P .. ':size', id, size)
  redis.call('HINCRBY', P .. ':bytes', ph, size - old)
  redis.call('HINCRBY', P .. ':bytes', '*', size - old)
end
local function sweep(now, n)
  local ms = redis.call('ZRANGEBYSCORE', P .. ':all', '-inf', now, 'LIMIT', 0, n)
  for _, m in ipairs(ms) do
    local ph, id = string.match(m, '^([^:]*):(.*)$')
    redis.call('DEL', P .. ':t:' .. id)
    redis.call('ZREM', P .. ':all', m)
    redis.call('ZREM', P .. ':live', m)
    redis.call('ZREM', P .. ':live:' .. ph, id)
    redis.call('ZREM', P .. ':idx:' .. ph, id)
    unbill(ph, id)
  end
  return #ms
end
`

var (
	// ARGV: prefix, id, owner hex, json, created ms, expires ms, max
	// live, max live per owner, size, max bytes, max bytes per owner,
	// live score (the lease, or the expiry). Returns {1}, {-1} (total
	// cap), {-2} (owner cap), {-3} (id taken), or {-4 or -5, bytes held}
	// (owner or total byte budget). A live task counts against the caps
	// while its live score (lease) is ahead.
	tasksCreate = redis.NewScript(tasksLib + `
local id, ph, js = ARGV[2], ARGV[3], ARGV[4]
local now, exp = tonumber(ARGV[5]), tonumber(ARGV[6])
local maxLive, maxPer = tonumber(ARGV[7]), tonumber(ARGV[8])
local size, maxBytes, maxBytesPer, score = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
sweep(now, 64)
if maxLive > 0 and redis.call('ZCOUNT', P .. ':live', '(' .. now, '+inf') >= maxLive then return {-1} end
if maxPer > 0 and redis.call('ZCOUNT', P .. ':live:' .. ph, '(' .. now, '+inf') >= maxPer then return {-2} end
local o, used = over(ph, size, maxBytes, maxBytesPer)
if o ~= 0 then return {o, used} end
if not redis.call('SET', P .. ':t:' .. id, js, 'NX', 'PXAT', exp + 60000) then return {-3} end
local m = ph .. ':' .. id
redis.call('ZADD', P .. ':all', exp, m)
redis.call('ZADD', P .. ':live', score, m)
redis.call('ZADD', P .. ':live:' .. ph, score, id)
redis.call('ZADD', P .. ':idx:' .. ph, now, id)
bill(ph, id, size)
return {1}
`)
	// ARGV: prefix, id, owner hex, old json, new json, "1" when the
	// task just ended, new size, max bytes, max bytes per owner, the new
	// live score ("" for unchanged). Returns {1}, {0} when the value
	// changed meanwhile, or {-4 or -5, bytes held} (a byte budget).
	tasksSwap = redis.NewScript(tasksLib + `
local id, ph = ARGV[2], ARGV[3]
local k = P .. ':t:' .. id
if redis.call('GET', k) ~= ARGV[4] then return {0} end
local size = tonumber(ARGV[7])
local old = tonumber(redis.call('HGET', P .. ':size', id) or '0')
local o, used = over(ph, size - old, tonumber(ARGV[8]), tonumber(ARGV[9]))
if o ~= 0 then return {o, used} end
redis.call('SET', k, ARGV[5], 'KEEPTTL')
bill(ph, id, size)
if ARGV[6] == '1' then
  redis.call('ZREM', P .. ':live', ph .. ':' .. id)
  redis.call('ZREM', P .. ':live:' .. ph, id)
elseif ARGV[10] ~= '' then
  redis.call('ZADD', P .. ':live', 'XX', tonumber(ARGV[10]), ph .. ':' .. id)
  redis.call('ZADD', P .. ':live:' .. ph, 'XX', tonumber(ARGV[10]), id)
end
return {1}
`)
	// ARGV: prefix, id, owner hex, old json. Returns 1, or 0 when the
	// value changed meanwhile.
	tasksDelete = redis.NewScript(tasksLib + `
local id, ph = ARGV[2], ARGV[3]
if redis.call('GET', P .. ':t:' .. id) ~= ARGV[4] then return 0 end
local m = ph .. ':' .. id
redis.call('DEL', P .. ':t:' .. id)
redis.call('ZREM', P .. ':all', m)
redis.call('ZREM', P .. ':live', m)
redis.call('ZREM', P .. ':live:' .. ph, id)
redis.call('ZREM', P .. ':idx:' .. ph, id)
unbill(ph, id)
return 1
`)
	// KEYS: task records. ARGV: the most bytes of one record, the most
	// bytes of all. Returns, per key in order and while the records
	// returned stay within the second bound (at least one): false for a
	// key that holds no string, the record, or for a record longer than
	// the first bound its length instead of its bytes.
	tasksRead = redis.NewScript(`
local one, all = tonumber(ARGV[1]), tonumber(ARGV[2])
local out, total = {}, 0
for i, k in ipairs(KEYS) do
  if i > 1 and total > all then break end
  if redis.call('TYPE', k).ok ~= 'string' then
    out[i] = false
  else
    local n = redis.call('STRLEN', k)
    if n > one then
      out[i] = n
    else
      out[i] = redis.call('GET', k)
      total = total + n
    end
  end
end
return out
`)
	// ARGV: prefix, now ms, max. Returns how many it dropped.
	tasksSweep = redis.NewScript(tasksLib + `
return sweep(tonumber(ARGV[2]), tonumber(ARGV[3]))
`)
)

// swapRetries bounds the compare-and-set rounds of one Update.
const swapRetries = 64

func ownerHex(principal string) string { return hex.EncodeToString([]byte(principal)) }

// reply splits a script's {code, bytes held} reply.
func reply(r []int64) (n, used int64) {
	if len(r) > 1 {
		used = r[1]
	}
	if len(r) > 0 {
		n = r[0]
	}
	return n, used
}

// liveScore is the score of a live task in the live indexes: it counts
// against the caps until then (its lease, else its expiry).
func liveScore(t *tasks.Task) int64 {
	if !t.LeaseUntil.IsZero() && t.LeaseUntil.Before(t.ExpiresAt) {
		return t.LeaseUntil.UnixMilli()
	}
	return t.ExpiresAt.UnixMilli()
}

// Create implements tasks.Store.
func (s *Tasks) Create(ctx context.Context, t *tasks.Task) (*tasks.Task, error) {
	if !t.Status.Valid() || t.Status.Terminal() {
		return nil, fmt.Errorf("tasks: create with status %q: want working or input_required", t.Status)
	}
	if t.TTL <= 0 {
		return nil, fmt.Errorf("tasks: create with ttl %v: want a positive ttl", t.TTL)
	}
	ctx, cancel := s.c.ctx(ctx)
	defer cancel()
	for range 3 {
		now := tasks.Now()
		c := t.Clone()
		c.ID = tasks.NewID()
		c.CreatedAt, c.UpdatedAt = now, now
		c.ExpiresAt = now.Add(c.TTL)
		js, err := s.encode(c)
		if err != nil {
			return nil, err
		}
		r, err := tasksCreate.Run(ctx, s.c.rdb, nil, s.p, c.ID, ownerHex(c.Principal), js,
			now.UnixMilli(), c.ExpiresAt.UnixMilli(), s.lim.MaxLive, s.lim.MaxLivePerPrincipal,
			c.Size(), s.lim.MaxBytes, s.lim.MaxBytesPerPrincipal, liveScore(c)).Int64Slice()
		if err != nil {
			return nil, wrap("tasks create", err)
		}
		switch n, used := reply(r); n {
		case -1:
			return nil, fmt.Errorf("%w (%d)", tasks.ErrTooManyTotal, s.lim.MaxLive)
		case -2:
			return nil, fmt.Errorf("%w (%d)", tasks.ErrTooManyForPrincipal, s.lim.MaxLivePerPrincipal)
		case -4:
			return nil, fmt.Errorf("%w (%d bytes held, budget %d)", tasks.ErrBytesForPrincipal, used, s.lim.MaxBytesPerPrincipal)
		case -5:
			return nil, fmt.Errorf("%w (%d bytes held, budget %d)", tasks.ErrBytesTotal, used, s.lim.MaxBytes)
		case 1:
			return c, nil
		}
	}
	return nil, errors.New("tasks: create: no free id after 3 tries")
}

// maxRecord is the longest task record the store writes and reads back:
// one principal's byte budget bounds what a task is billed (Size), its
// JSON (encode: raw members keep their length) is twice that at most but
// for strings full of escapes, plus fixed fields. A record read back
// longer than this is not read: only a writer of Redis could have put it
// there.
func (s *Tasks) maxRecord() int64 {
	b := s.lim.MaxBytesPerPrincipal
	if b <= 0 || (s.lim.MaxBytes > 0 && s.lim.MaxBytes < b) {
		b = s.lim.MaxBytes
	}
	if b <= 0 {
		b = defaultRecordBudget
	}
	return 2*b + 64<<10
}

// defaultRecordBudget stands in for the byte budget of a store made
// without one (mcp's default per-principal budget).
const defaultRecordBudget = 32 << 20

// encode is the stored JSON of t: without HTML escaping, so that a raw
// member (arguments, a result) keeps its length, and refused past
// maxRecord.
func (s *Tasks) encode(t *tasks.Task) (string, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(t); err != nil {
		return "", fmt.Errorf("tasks: encode: %w", err)
	}
	js := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if max := s.maxRecord(); int64(len(js)) > max {
		return "", fmt.Errorf("%w: a record of %d bytes, over the %d a task may take", tasks.ErrBytesForPrincipal, len(js), max)
	}
	return string(js), nil
}

// read returns the records under keys, in order, from the first on:
// each one at most maxRecord bytes long (a longer one is logged and
// given as absent) and, but for the first, no more in all than
// maxRecord, so that what one read brings into memory is bounded
// however the records were written. A missing record is ok false.
// It may return fewer records than keys; the caller reads the rest
// again.
func (s *Tasks) read(ctx context.Context, keys []string) ([]string, []bool, error) {
	max := s.maxRecord()
	vals, err := tasksRead.Run(ctx, s.c.rdb, keys, max, max).Slice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, nil, err
	}
	js := make([]string, len(vals))
	ok := make([]bool, len(vals))
	for i, v := range vals {
		switch v := v.(type) {
		case string:
			js[i], ok[i] = v, true
		case int64:
			s.c.log.Warn("tasks: a record in Redis is longer than any task may be; ignored", "key", keys[i], "bytes", v, "max", max)
		}
	}
	return js, ok, nil
}

// load returns the stored JSON of a live task of principal and the task.
func (s *Tasks) load(ctx context.Context, principal, id string) (string, *tasks.Task, error) {
	vals, ok, err := s.read(ctx, []string{s.p + ":t:" + id})
	if err != nil {
		return "", nil, wrap("tasks get", err)
	}
	if len(ok) == 0 || !ok[0] {
		return "", nil, tasks.ErrNotFound
	}
	js := vals[0]
	t, good := s.decode(js, principal, id, time.Now())
	if !good {
		return "", nil, tasks.ErrNotFound
	}
	return js, t, nil
}

// decode parses a stored task of principal and checks it as strictly as
// a client's request (tasks.Task.Check): a record that does not pass is
// reported once in the log and treated as absent. A live task whose
// lease passed is shown failed (tasks.Task.Lapse).
func (s *Tasks) decode(js, principal, id string, now time.Time) (*tasks.Task, bool) {
	var t tasks.Task
	if err := json.Unmarshal([]byte(js), &t); err != nil {
		s.c.log.Warn("tasks: a record in Redis does not parse; ignored", "task", id, "error", err)
		return nil, false
	}
	if err := t.Check(id); err != nil {
		s.c.log.Warn("tasks: a record in Redis is invalid; ignored", "task", id, "error", err)
		return nil, false
	}
	if t.Principal != principal || !now.Before(t.ExpiresAt) {
		return nil, false
	}
	t.Lapse(now)
	return &t, true
}

// Get implements tasks.Store.
func (s *Tasks) Get(ctx context.Context, principal, id string) (*tasks.Task, error) {
	ctx, cancel := s.c.ctx(ctx)
	defer cancel()
	_, t, err := s.load(ctx, principal, id)
	return t, err
}

// Update implements tasks.Store.
func (s *Tasks) Update(ctx context.Context, principal, id string, fn func(*tasks.Task) error) (*tasks.Task, error) {
	return s.swap(ctx, principal, id, func(old *tasks.Task) (*tasks.Task, error) {
		c := old.Clone()
		if err := fn(c); err != nil {
			return nil, err
		}
		if err := tasks.CheckUpdate(old, c); err != nil {
			return nil, err
		}
		return c, nil
	})
}

// Cancel implements tasks.Store.
func (s *Tasks) Cancel(ctx context.Context, principal, id string) (*tasks.Task, error) {
	return s.swap(ctx, principal, id, func(old *tasks.Task) (*tasks.Task, error) {
		if old.Status.Terminal() {
			return nil, nil // unchanged
		}
		c := old.Clone()
		c.Status, c.StatusMessage = tasks.Cancelled, "cancelled by the client"
		c.InputRequests, c.InputResponses = nil, nil
		return c, nil
	})
}

// swap replaces a task by next(task) with compare-and-set, retrying when
// another writer came first. next returning nil, nil leaves the task
// unchanged and returns it.
func (s *Tasks) swap(ctx context.Context, principal, id string, next func(*tasks.Task) (*tasks.Task, error)) (*tasks.Task, error) {
	ctx, cancel := s.c.ctx(ctx)
	defer cancel()
	for range swapRetries {
		js, old, err := s.load(ctx, principal, id)
		if err != nil {
			return nil, err
		}
		c, err := next(old)
		if err != nil {
			return nil, err
		}
		if c == nil {
			return old, nil
		}
		c.UpdatedAt = tasks.Now()
		nj, err := s.encode(c)
		if err != nil {
			return nil, err
		}
		ended, score := "0", ""
		if !old.Status.Terminal() && c.Status.Terminal() {
			ended = "1"
		} else if !c.Status.Terminal() && !c.LeaseUntil.Equal(old.LeaseUntil) {
			score = strconv.FormatInt(liveScore(c), 10)
		}
		r, err := tasksSwap.Run(ctx, s.c.rdb, nil, s.p, id, ownerHex(principal), js, nj, ended,
			c.Size(), s.lim.MaxBytes, s.lim.MaxBytesPerPrincipal, score).Int64Slice()
		if err != nil {
			return nil, wrap("tasks update", err)
		}
		switch n, used := reply(r); n {
		case 1:
			return c, nil
		case -4:
			return nil, tasks.OverBudget(true, c.Size()-old.Size(), used, s.lim.MaxBytesPerPrincipal)
		case -5:
			return nil, tasks.OverBudget(false, c.Size()-old.Size(), used, s.lim.MaxBytes)
		}
	}
	return nil, fmt.Errorf("tasks: update of %s: changed by others %d times in a row", id, swapRetries)
}

// List implements tasks.Store.
func (s *Tasks) List(ctx context.Context, principal, cursor string, limit int) ([]*tasks.Task, string, error) {
	var afterAt int64
	var afterID string
	min := "-inf"
	if cursor != "" {
		at, id, err := tasks.DecodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		afterAt, afterID = at.UnixMilli(), id
		min = strconv.FormatInt(afterAt, 10)
	}
	if limit <= 0 {
		limit = 50
	}
	ctx, cancel := s.c.ctx(ctx)
	defer cancel()
	idx := s.p + ":idx:" + ownerHex(principal)
	var page []*tasks.Task
	now := time.Now()
	for offset := int64(0); len(page) <= limit; {
		zs, err := s.c.rdb.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: idx, Start: min, Stop: "+inf", ByScore: true, Offset: offset, Count: 256}).Result()
		if err != nil {
			return nil, "", wrap("tasks list", err)
		}
		if len(zs) == 0 {
			break
		}
		offset += int64(len(zs))
		keys := make([]string, 0, len(zs))
		for _, z := range zs {
			id, _ := z.Member.(string)
			if cursor != "" && int64(z.Score) == afterAt && id <= afterID {
				continue
			}
			keys = append(keys, s.p+":t:"+id)
		}
		if len(keys) == 0 {
			continue
		}
		for len(keys) > 0 && len(page) <= limit {
			vals, ok, err := s.read(ctx, keys)
			if err != nil {
				return nil, "", wrap("tasks list", err)
			}
			for i, js := range vals {
				if !ok[i] {
					continue
				}
				t, good := s.decode(js, principal, keys[i][len(s.p)+3:], now)
				if !good {
					continue
				}
				page = append(page, t)
				if len(page) > limit {
					break
				}
			}
			keys = keys[len(vals):]
		}
	}
	if len(page) > limit {
		last := page[limit-1]
		return page[:limit], tasks.EncodeCursor(last.CreatedAt, last.ID), nil
	}
	return page, "", nil
}

// Delete implements tasks.Store.
func (s *Tasks) Delete(ctx context.Context, principal, id string) error {
	ctx, cancel := s.c.ctx(ctx)
	defer cancel()
	for range swapRetries {
		js, _, err := s.load(ctx, principal, id)
		if err != nil {
			return err
		}
		n, err := tasksDelete.Run(ctx, s.c.rdb, nil, s.p, id, ownerHex(principal), js).Int()
		if err != nil {
			return wrap("tasks delete", err)
		}
		if n == 1 {
			return nil
		}
	}
	return fmt.Errorf("tasks: delete of %s: changed by others %d times in a row", id, swapRetries)
}

// Expire implements tasks.Store.
func (s *Tasks) Expire(ctx context.Context, now time.Time) (int, error) {
	ctx, cancel := s.c.ctx(ctx)
	defer cancel()
	total := 0
	for {
		n, err := tasksSweep.Run(ctx, s.c.rdb, nil, s.p, now.UnixMilli(), 1000).Int()
		if err != nil {
			return total, wrap("tasks expire", err)
		}
		total += n
		if n < 1000 {
			return total, nil
		}
	}
}

// TaskNotifier carries task changes between replicas (tasks.Notifier):
// Publish calls this replica's subscribers at once and queues the change
// for the others, whose subscribers Redis pub/sub reaches.
type TaskNotifier struct {
	local *tasks.Local
	bus   *Bus
}

var _ tasks.Notifier = (*TaskNotifier)(nil)

// TaskNotifier returns the cluster's task notifier (one per Cluster),
// which checks each change against the task store with the caps lim (as
// Tasks; the first call's lim holds).
func (c *Cluster) TaskNotifier(lim tasks.Limits) *TaskNotifier {
	c.notifierOnce.Do(func() {
		n := &TaskNotifier{local: tasks.NewLocal(), bus: c.newBus("wasmcp:bus:tasks")}
		store := c.Tasks(lim)
		c.subscribe(n.bus.channel, func(msg []byte) {
			ch, err := store.verifyChange(msg)
			if err != nil {
				c.log.Warn("tasks: a change from the bus is invalid; dropped", "error", err)
				return
			}
			_ = n.local.Publish(context.Background(), ch)
		})
		c.notifier = n
	})
	return c.notifier
}

// Publish implements tasks.Notifier. Its error says the change did not
// leave this replica (the queue to Redis is full).
func (n *TaskNotifier) Publish(ctx context.Context, c tasks.Change) error {
	_ = n.local.Publish(ctx, c)
	msg, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("tasks: encode change: %w", err)
	}
	return n.bus.Publish(msg)
}

// Subscribe implements tasks.Notifier.
func (n *TaskNotifier) Subscribe(fn func(tasks.Change)) (unsubscribe func()) {
	return n.local.Subscribe(fn)
}

// maxChange bounds a task change message on the bus (its principal is
// the bulk of it).
const maxChange = 8 << 10

// verifyChange checks a task change read from the bus before anything
// acts on it: pub/sub is open to anyone who reaches Redis, so a message
// is no proof. It must be one JSON object of at most maxChange bytes with
// exactly the fields of tasks.Change, a task id of NewID's shape and a
// valid status, and name a task of that principal whose record in Redis
// agrees: the same status, or a later update. The change returned is the
// record's, so a subscriber acts on what the store holds.
func (s *Tasks) verifyChange(msg []byte) (tasks.Change, error) {
	var ch tasks.Change
	if len(msg) > maxChange {
		return ch, fmt.Errorf("%d bytes, limit %d", len(msg), maxChange)
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ch); err != nil {
		return ch, fmt.Errorf("does not parse: %w", err)
	}
	if dec.More() {
		return ch, errors.New("trailing data after the change")
	}
	if !validID(ch.ID) || ch.Principal == "" || !ch.Status.Valid() {
		return ch, fmt.Errorf("task %.40q of %.40q with status %.20q: not a change a replica sends", ch.ID, ch.Principal, ch.Status)
	}
	ctx, cancel := s.c.ctx(context.Background())
	defer cancel()
	_, t, err := s.load(ctx, ch.Principal, ch.ID)
	if err != nil {
		return ch, fmt.Errorf("task %s of %.40q: %w", ch.ID, ch.Principal, err)
	}
	if t.Status != ch.Status && !t.UpdatedAt.After(ch.UpdatedAt) {
		return ch, fmt.Errorf("task %s of %.40q: the change says %q, the record %q", ch.ID, ch.Principal, ch.Status, t.Status)
	}
	return tasks.Change{ID: t.ID, Principal: t.Principal, Status: t.Status, UpdatedAt: t.UpdatedAt}, nil
}

// validID reports whether id has the shape of tasks.NewID's ids: 22
// characters of base64url.
func validID(id string) bool {
	if len(id) != 22 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
