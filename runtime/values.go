package runtime

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Besides compiled code, the on-disk cache keeps small values that a
// caller derived from a module and wants back at the next start without
// running the module (the plugins package keeps a plugin's described
// manifest). They are sealed like compiled code: an HMAC-SHA256 under
// the cache key over their own domain, their name and their bytes, so
// that a value read back is one this engine's key wrote under that name,
// or none. A value that does not verify is deleted and reported missing.

const (
	// valueMagic opens every sealed value: valueMagic, the length (8
	// bytes little-endian), the MAC, the value.
	valueMagic  = "WASMCPV1"
	valueHeader = len(valueMagic) + 8 + sha256.Size
	// MaxCachedValue bounds a value CacheValue stores and CachedValue
	// reads back.
	MaxCachedValue = 16 << 20
	// maxValueBytes bounds the sealed values on disk: past it the least
	// recently used are deleted.
	maxValueBytes = 256 << 20
)

// valueFile is where the value of name lives: the file is named by the
// SHA-256 of name, so any name is a safe one.
func (c *diskCache) valueFile(name string) string {
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(c.values, hex.EncodeToString(sum[:]))
}

// valueMAC is the MAC of the value of name.
func (c *diskCache) valueMAC(name string, value []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("wasmcp cached value v1\x00"))
	var l [8]byte
	binary.LittleEndian.PutUint64(l[:], uint64(len(name)))
	m.Write(l[:])
	m.Write([]byte(name))
	binary.LittleEndian.PutUint64(l[:], uint64(len(value)))
	m.Write(l[:])
	m.Write(value)
	return m.Sum(nil)
}

// readValue returns the verified value of name; fs.ErrNotExist when
// there is none.
func (c *diskCache) readValue(name string) ([]byte, error) {
	path := c.valueFile(name)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Size() < int64(valueHeader) || fi.Size()-int64(valueHeader) > MaxCachedValue {
		return nil, fmt.Errorf("not a sealed value (%v, %d bytes)", fi.Mode().Type(), fi.Size())
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	length := binary.LittleEndian.Uint64(b[len(valueMagic):])
	if string(b[:len(valueMagic)]) != valueMagic || length != uint64(len(b)-valueHeader) {
		return nil, errors.New("not a sealed value (header)")
	}
	if !hmac.Equal(c.valueMAC(name, b[valueHeader:]), b[len(valueMagic)+8:valueHeader]) {
		return nil, errors.New("MAC mismatch")
	}
	now := time.Now()
	_ = os.Chtimes(path, now, now) // used: kept longer by trimValues
	return b[valueHeader:], nil
}

// writeValue seals value under name (written aside and renamed, so a
// concurrent reader sees a whole value or none).
func (c *diskCache) writeValue(name string, value []byte) error {
	if len(value) > MaxCachedValue {
		return fmt.Errorf("value of %d bytes is over the cache's %d", len(value), MaxCachedValue)
	}
	if err := os.MkdirAll(c.values, 0o700); err != nil {
		return err
	}
	path := c.valueFile(name)
	out, err := os.CreateTemp(c.values, filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	b := make([]byte, valueHeader, valueHeader+len(value))
	copy(b, valueMagic)
	binary.LittleEndian.PutUint64(b[len(valueMagic):], uint64(len(value)))
	copy(b[len(valueMagic)+8:], c.valueMAC(name, value))
	if _, err := out.Write(append(b, value...)); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := os.Rename(out.Name(), path); err != nil {
		return err
	}
	c.trimValues()
	return nil
}

// trimValues deletes the least recently used values until those left
// weigh at most maxValueBytes, and temporary files older than staleTemp.
func (c *diskCache) trimValues() {
	ents, err := os.ReadDir(c.values)
	if err != nil {
		return
	}
	type file struct {
		path string
		size int64
		used time.Time
	}
	var files []file
	var total int64
	for _, de := range ents {
		fi, err := de.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		p := filepath.Join(c.values, de.Name())
		if strings.HasSuffix(de.Name(), ".tmp") {
			if time.Since(fi.ModTime()) > staleTemp {
				_ = os.Remove(p)
			}
			continue
		}
		files = append(files, file{p, fi.Size(), fi.ModTime()})
		total += fi.Size()
	}
	slices.SortFunc(files, func(a, b file) int { return a.used.Compare(b.used) })
	for _, f := range files {
		if total <= maxValueBytes {
			break
		}
		if os.Remove(f.path) == nil {
			total -= f.size
		}
	}
}

// CachedValue returns the value CacheValue stored under name, verified;
// false when the on-disk cache is off, holds none, or holds one that
// does not verify (deleted, and logged).
func (e *Engine) CachedValue(name string) ([]byte, bool) {
	if e.disk == nil {
		return nil, false
	}
	v, err := e.disk.readValue(name)
	switch {
	case err == nil:
		return v, true
	case errors.Is(err, fs.ErrNotExist):
	default:
		e.log.Warn("cache: a cached value does not verify; discarded", "file", e.disk.valueFile(name), "reason", err.Error())
		_ = os.Remove(e.disk.valueFile(name))
	}
	return nil, false
}

// CacheValue stores value under name in the on-disk cache, sealed (at
// most MaxCachedValue bytes); it does nothing when the cache is off. A
// failure is logged: a value not kept costs the next start its work.
func (e *Engine) CacheValue(name string, value []byte) {
	if e.disk == nil {
		return
	}
	if err := e.disk.writeValue(name, value); err != nil {
		e.log.Warn("cache: cannot store a value", "error", err)
	}
}
