package hostapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// KVQuota bounds each plugin's namespace. Zero fields take the defaults
// given.
type KVQuota struct {
	MaxKeySize   int   // bytes per key (default 512)
	MaxValueSize int   // bytes per value, as JSON (default 1 MiB)
	MaxKeys      int   // keys per plugin (default 10,000)
	MaxBytes     int64 // key + value bytes per plugin (default 64 MiB)
}

// WithDefaults returns q with its zero fields set to the defaults.
func (q KVQuota) WithDefaults() KVQuota {
	if q.MaxKeySize <= 0 {
		q.MaxKeySize = 512
	}
	if q.MaxValueSize <= 0 {
		q.MaxValueSize = 1 << 20
	}
	if q.MaxKeys <= 0 {
		q.MaxKeys = 10000
	}
	if q.MaxBytes <= 0 {
		q.MaxBytes = 64 << 20
	}
	return q
}

// KV is the store behind kv/*: one namespace per plugin, each bounded by
// a KVQuota. [KVStore] is the process's own; internal/cluster keeps one in
// Redis. Implementations return ErrKVQuota for a key, a value or a
// namespace over its quota, and an error wrapping ErrKVUnavailable when
// the storage cannot be reached in bounded time. Safe for concurrent use.
type KV interface {
	// Get returns the live value of key, or found false.
	Get(ctx context.Context, plugin, key string) (value json.RawMessage, found bool, err error)
	// Set stores value under key, expiring after ttl when ttl > 0.
	Set(ctx context.Context, plugin, key string, value json.RawMessage, ttl time.Duration) error
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, plugin, key string) error
	// List returns up to limit live keys with prefix after the key
	// after, sorted bytewise, and the key to pass as after for the next
	// page ("" when this page is the last).
	List(ctx context.Context, plugin, prefix, after string, limit int) (keys []string, next string, err error)
}

// ErrKVQuota is returned by a [KV] for a key, value or namespace over its
// quota; plugins see abi.ErrTooBig.
var ErrKVQuota = errors.New("kv quota exceeded")

// ErrKVUnavailable is wrapped by the errors of a [KV] whose storage cannot
// be reached; plugins see a failure whose message says the store is
// unavailable.
var ErrKVUnavailable = errors.New("kv store unavailable")

var _ KV = (*KVStore)(nil)

// KVStore is the process's own [KV]: one namespace per plugin, in memory
// or persisted in a directory.
//
// # Persistence
//
// Each namespace is an append-only log of JSON lines, <dir>/<hex(plugin)>.kv,
// loaded and compacted (live, unexpired entries rewritten to a temporary
// file, fsynced, renamed over the log) the first time the plugin uses it,
// and again when the log grows past four times its live size. Writes are
// appended without fsync: they survive a crash of the server process, and a
// power loss may drop the last writes but never corrupts earlier ones (a
// torn last line is skipped on load). Close fsyncs every log.
//
// A KVStore is safe for concurrent use; namespaces do not contend.
type KVStore struct {
	dir string
	q   KVQuota

	mu     sync.Mutex
	spaces map[string]*kvSpace
	closed bool
}

type kvSpace struct {
	mu      sync.Mutex
	items   map[string]kvItem
	bytes   int64 // live key + value bytes
	f       *os.File
	logSize int64
	path    string
	err     error // load failure, reported on every use
}

type kvItem struct {
	value   json.RawMessage
	expires int64 // unix nanoseconds; 0 never
}

// kvRecord is one log line.
type kvRecord struct {
	K string          `json:"k"`
	V json.RawMessage `json:"v,omitempty"`
	E int64           `json:"e,omitempty"`
	D bool            `json:"d,omitempty"`
}

// OpenKV opens a store. dir "" keeps everything in memory; otherwise dir is
// created 0700 and namespaces persist across restarts.
func OpenKV(dir string, q KVQuota) (*KVStore, error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("open kv store: %w", err)
		}
	}
	return &KVStore{dir: dir, q: q.WithDefaults(), spaces: map[string]*kvSpace{}}, nil
}

// Close fsyncs and closes every namespace log. Later calls fail.
func (s *KVStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var errs []error
	for _, sp := range s.spaces {
		sp.mu.Lock()
		if sp.f != nil {
			errs = append(errs, sp.f.Sync(), sp.f.Close())
			sp.f = nil
		}
		sp.err = errors.New("kv store closed")
		sp.mu.Unlock()
	}
	return errors.Join(errs...)
}

// space returns the plugin's namespace, loading it on first use.
func (s *KVStore) space(plugin string) (*kvSpace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("kv store closed")
	}
	sp, ok := s.spaces[plugin]
	if !ok {
		sp = &kvSpace{items: map[string]kvItem{}}
		if s.dir != "" {
			sp.path = filepath.Join(s.dir, hex.EncodeToString([]byte(plugin))+".kv")
			sp.err = sp.load()
		}
		s.spaces[plugin] = sp
	}
	return sp, sp.err
}

// load replays the log and compacts it.
func (sp *kvSpace) load() error {
	data, err := os.ReadFile(sp.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("load kv namespace: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 8<<20)
	for sc.Scan() {
		var r kvRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.K == "" {
			continue // a torn or foreign line
		}
		if r.D {
			sp.del(r.K)
		} else {
			sp.put(r.K, kvItem{value: r.V, expires: r.E})
		}
	}
	return sp.compact()
}

// compact rewrites the log with the live entries and reopens it for append.
func (sp *kvSpace) compact() error {
	now := time.Now().UnixNano()
	var buf bytes.Buffer
	for k, it := range sp.items {
		if it.expires != 0 && it.expires <= now {
			sp.del(k)
			continue
		}
		line, _ := json.Marshal(kvRecord{K: k, V: it.value, E: it.expires})
		buf.Write(line)
		buf.WriteByte('\n')
	}
	tmp := sp.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("compact kv namespace: %w", err)
	}
	if _, err = f.Write(buf.Bytes()); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, sp.path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("compact kv namespace: %w", err)
	}
	if d, err := os.Open(filepath.Dir(sp.path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	if sp.f != nil {
		_ = sp.f.Close()
	}
	sp.f, err = os.OpenFile(sp.path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("open kv namespace: %w", err)
	}
	sp.logSize = int64(buf.Len())
	return nil
}

func (sp *kvSpace) put(k string, it kvItem) {
	if old, ok := sp.items[k]; ok {
		sp.bytes -= int64(len(k) + len(old.value))
	}
	sp.items[k] = it
	sp.bytes += int64(len(k) + len(it.value))
}

func (sp *kvSpace) del(k string) {
	if old, ok := sp.items[k]; ok {
		sp.bytes -= int64(len(k) + len(old.value))
		delete(sp.items, k)
	}
}

// append writes one record to the log (persistent stores only).
func (sp *kvSpace) append(r kvRecord) error {
	if sp.f == nil {
		return nil
	}
	line, _ := json.Marshal(r)
	line = append(line, '\n')
	if _, err := sp.f.Write(line); err != nil {
		return fmt.Errorf("write kv namespace: %w", err)
	}
	sp.logSize += int64(len(line))
	if sp.logSize > 4*sp.bytes+1<<20 {
		return sp.compact()
	}
	return nil
}

// expireAll drops expired entries.
func (sp *kvSpace) expireAll(now int64) {
	for k, it := range sp.items {
		if it.expires != 0 && it.expires <= now {
			sp.del(k)
		}
	}
}

// Get implements [KV].
func (s *KVStore) Get(_ context.Context, plugin, key string) (json.RawMessage, bool, error) {
	sp, err := s.space(plugin)
	if err != nil {
		return nil, false, err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	it, ok := sp.items[key]
	if !ok {
		return nil, false, nil
	}
	if it.expires != 0 && it.expires <= time.Now().UnixNano() {
		sp.del(key)
		return nil, false, sp.append(kvRecord{K: key, D: true})
	}
	return it.value, true, nil
}

// Set implements [KV].
func (s *KVStore) Set(_ context.Context, plugin, key string, value json.RawMessage, ttl time.Duration) error {
	if len(key) > s.q.MaxKeySize || len(value) > s.q.MaxValueSize {
		return ErrKVQuota
	}
	sp, err := s.space(plugin)
	if err != nil {
		return err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	old, exists := sp.items[key]
	fits := func() bool {
		n := len(sp.items)
		grow := int64(len(key) + len(value))
		if exists {
			grow -= int64(len(key) + len(old.value))
		} else {
			n++
		}
		return n <= s.q.MaxKeys && sp.bytes+grow <= s.q.MaxBytes
	}
	if !fits() {
		sp.expireAll(time.Now().UnixNano())
		old, exists = sp.items[key]
		if !fits() {
			return ErrKVQuota
		}
	}
	var exp int64
	if ttl > 0 {
		exp = time.Now().Add(ttl).UnixNano()
	}
	value = append(json.RawMessage(nil), value...)
	sp.put(key, kvItem{value: value, expires: exp})
	return sp.append(kvRecord{K: key, V: value, E: exp})
}

// Delete implements [KV].
func (s *KVStore) Delete(_ context.Context, plugin, key string) error {
	sp, err := s.space(plugin)
	if err != nil {
		return err
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if _, ok := sp.items[key]; !ok {
		return nil
	}
	sp.del(key)
	return sp.append(kvRecord{K: key, D: true})
}

// List implements [KV].
func (s *KVStore) List(_ context.Context, plugin, prefix, after string, limit int) ([]string, string, error) {
	sp, err := s.space(plugin)
	if err != nil {
		return nil, "", err
	}
	sp.mu.Lock()
	now := time.Now().UnixNano()
	var keys []string
	for k, it := range sp.items {
		if strings.HasPrefix(k, prefix) && k > after && (it.expires == 0 || it.expires > now) {
			keys = append(keys, k)
		}
	}
	sp.mu.Unlock()
	slices.Sort(keys)
	if len(keys) > limit {
		return keys[:limit], keys[limit-1], nil
	}
	return keys, "", nil
}

// kvPage is how many keys one kv/list returns.
const kvPage = 100

// kvCall handles kv/get {key} -> {value|null}, kv/set {key, value, ttl_s?}
// -> {}, kv/delete {key} -> {}, kv/list {prefix, cursor?} -> {keys,
// cursor?}. Errnos: -2 malformed params (empty key, missing value, bad
// cursor, negative ttl), -4 key/value size or namespace quota, -5 storage
// failure.
func (h *Host) kvCall(ctx context.Context, method string, params []byte) ([]byte, int32) {
	var p struct {
		Key    string          `json:"key"`
		Value  json.RawMessage `json:"value"`
		TTL    *float64        `json:"ttl_s"`
		Prefix string          `json:"prefix"`
		Cursor string          `json:"cursor"`
	}
	if !decode(params, &p) {
		return nil, abi.ErrBadParams
	}
	if method != abi.HostKVList && p.Key == "" {
		return nil, abi.ErrBadParams
	}
	var err error
	switch method {
	case abi.HostKVGet:
		v, found, gerr := h.kv.Get(ctx, h.plugin, p.Key)
		if gerr == nil {
			if !found {
				v = json.RawMessage("null")
			}
			return ok(struct {
				Value json.RawMessage `json:"value"`
			}{v})
		}
		err = gerr
	case abi.HostKVSet:
		if len(p.Value) == 0 || (p.TTL != nil && *p.TTL < 0) {
			return nil, abi.ErrBadParams
		}
		var ttl time.Duration
		if p.TTL != nil {
			ttl = time.Duration(*p.TTL * float64(time.Second))
		}
		err = h.kv.Set(ctx, h.plugin, p.Key, p.Value, ttl)
	case abi.HostKVDelete:
		err = h.kv.Delete(ctx, h.plugin, p.Key)
	case abi.HostKVList:
		after, derr := base64.RawURLEncoding.DecodeString(p.Cursor)
		if derr != nil {
			return nil, abi.ErrBadParams
		}
		keys, next, lerr := h.kv.List(ctx, h.plugin, p.Prefix, string(after), kvPage)
		if lerr == nil {
			res := struct {
				Keys   []string `json:"keys"`
				Cursor string   `json:"cursor,omitempty"`
			}{Keys: keys}
			if res.Keys == nil {
				res.Keys = []string{}
			}
			if next != "" {
				res.Cursor = base64.RawURLEncoding.EncodeToString([]byte(next))
			}
			return ok(res)
		}
		err = lerr
	}
	switch {
	case err == nil:
		return empty, 0
	case errors.Is(err, ErrKVQuota):
		return nil, abi.ErrTooBig
	case errors.Is(err, ErrKVUnavailable):
		h.log.Warn("kv failed", "error", err)
		return failed(codeFailed, "kv store unavailable; retry later")
	}
	h.log.Error("kv failed", "error", err)
	return failed(codeFailed, "storage failed")
}
