package runtime

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"time"
)

// The on-disk compilation cache holds native code, which runs outside the
// sandbox and past the plugin signatures; its directory is treated as
// untrusted. wazero reads its file cache without authentication (a CRC
// over the code only) and offers no storage interface, so it is given a
// private directory instead (os.MkdirTemp, 0700, removed by Close), and
// the entries in cache_dir are sealed: each carries an HMAC-SHA256, under
// a key kept outside cache_dir, over wazero's entry name, the wazero
// version, the platform and the entry's bytes. Before a compile the
// engine copies the module's verified entry into the private directory;
// after a compile that found none it seals what wazero wrote there back
// into cache_dir. An entry that does not verify (rewritten, truncated,
// another module's entry under this name, not a regular file, too large)
// is deleted and the module is compiled again: a cache problem costs a
// compile, never uninstrumented code.
//
// wazero names an entry sha256(sha256(wasm ‖ ensureTermination) ‖
// "WAZEVO" ‖ cpu features as 8 bytes little-endian), the cpu features
// being at most three bits; the engine computes the few candidate names
// itself. Were a future wazero to name them otherwise, the engine would
// simply find no entry to seal (a miss on every start), never a wrong one:
// a name is a hash of the module's bytes.

const (
	// sealMagic opens every sealed entry; the format is sealMagic, the
	// payload's length (8 bytes little-endian), the MAC (32 bytes), then
	// wazero's entry.
	sealMagic  = "WASMCPS1"
	sealHeader = len(sealMagic) + 8 + sha256.Size
	// maxSealedEntry bounds the entry read back: far above the native
	// code of the largest module the module limits admit.
	maxSealedEntry = 1 << 30
	// maxCacheBytes bounds the sealed entries of one wazero version and
	// platform on disk: past it the least recently used are deleted.
	maxCacheBytes = 1 << 30
	// staleTemp is the age past which a temporary file in the sealed
	// directory is a crashed writer's and is deleted.
	staleTemp = time.Hour
	// CacheKeyEnv names the environment variable that overrides the
	// location of the cache key (Config.CacheKeyFile takes precedence).
	CacheKeyEnv = "WASMCP_CACHE_KEY"
	// cpuCandidates covers wazero's CPU feature bits (three on amd64,
	// one on arm64).
	cpuCandidates = 8
)

// diskCache is the authenticated on-disk side of the compilation cache.
type diskCache struct {
	sealed string // sealed entries, in cache_dir (untrusted)
	values string // sealed values (values.go), in cache_dir
	work   string // the private directory given to wazero
	files  string // wazero's per-version subdirectory of work
	key    []byte
	domain []byte // MAC prefix: format, wazero version, platform
	log    *slog.Logger
	max    int64 // bytes of sealed entries kept (maxCacheBytes)
}

// entryName is one of wazero's file names for a module.
type entryName [sha256.Size]byte

func (n entryName) String() string { return hex.EncodeToString(n[:]) }

// names returns the candidate wazero entry names of wasm compiled on a
// runtime with (ensureTermination) or without WithCloseOnContextDone.
func (c *diskCache) names(wasm []byte, ensureTermination bool) []entryName {
	h := sha256.New()
	h.Write(wasm)
	if ensureTermination {
		h.Write([]byte{1})
	} else {
		h.Write([]byte{0})
	}
	id := h.Sum(nil)
	out := make([]entryName, cpuCandidates)
	var cpu [8]byte
	for i := range out {
		binary.LittleEndian.PutUint64(cpu[:], uint64(i))
		s := sha256.New()
		s.Write(id)
		s.Write([]byte("WAZEVO"))
		s.Write(cpu[:])
		s.Sum(out[i][:0])
	}
	return out
}

// mac returns the MAC of an entry's header fields and payload (written to
// the returned hash by the caller).
func (c *diskCache) mac(name entryName, length uint64) hash.Hash {
	m := hmac.New(sha256.New, c.key)
	m.Write(c.domain)
	m.Write(name[:])
	var l [8]byte
	binary.LittleEndian.PutUint64(l[:], length)
	m.Write(l[:])
	return m
}

// place copies the verified sealed entries among names into wazero's
// directory and reports whether it placed one. An entry that does not
// verify is deleted and logged; plugin names the module in the log.
func (c *diskCache) place(plugin string, names []entryName) bool {
	placed := false
	for _, n := range names {
		err := c.unseal(n)
		switch {
		case err == nil:
			placed = true
			// Mark it used, for the eviction (seal trims the least
			// recently used first).
			now := time.Now()
			_ = os.Chtimes(filepath.Join(c.sealed, n.String()), now, now)
		case errors.Is(err, fs.ErrNotExist):
		default:
			c.log.Warn("compilation cache: entry does not verify; discarded, the plugin is compiled again",
				"plugin", plugin, "entry", filepath.Join(c.sealed, n.String()), "reason", err.Error())
			if err := os.Remove(filepath.Join(c.sealed, n.String())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				c.log.Warn("compilation cache: cannot delete an entry that does not verify", "plugin", plugin, "error", err)
			}
		}
	}
	return placed
}

// unseal verifies the sealed entry n while copying its payload into
// wazero's directory, where it appears (renamed into place) only once
// verified. A missing entry is fs.ErrNotExist.
func (c *diskCache) unseal(n entryName) error {
	src := filepath.Join(c.sealed, n.String())
	fi, err := os.Lstat(src)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return fmt.Errorf("stat: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	if fi.Size() < int64(sealHeader) || fi.Size()-int64(sealHeader) > maxSealedEntry {
		return fmt.Errorf("size %d bytes is not that of a sealed entry", fi.Size())
	}
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !os.SameFile(fi, st) {
		return errors.New("replaced while opened")
	}
	var hdr [sealHeader]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return fmt.Errorf("read header: %w", err)
	}
	length := binary.LittleEndian.Uint64(hdr[len(sealMagic):])
	if string(hdr[:len(sealMagic)]) != sealMagic || length != uint64(fi.Size()-int64(sealHeader)) {
		return errors.New("not a sealed entry (header)")
	}
	tmp, err := os.CreateTemp(c.files, n.String()+".*.tmp")
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	defer tmp.Close()
	m := c.mac(n, length)
	got, err := io.Copy(io.MultiWriter(tmp, m), io.LimitReader(f, int64(length)))
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	if uint64(got) != length {
		return fmt.Errorf("truncated: %d of %d bytes", got, length)
	}
	if !hmac.Equal(m.Sum(nil), hdr[len(sealMagic)+8:]) {
		return errors.New("MAC mismatch")
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(c.files, n.String())); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	return nil
}

// seal seals the entries among names that wazero wrote into its directory
// back into cache_dir (each written to a temporary file and renamed, so a
// concurrent reader sees a whole entry or none).
func (c *diskCache) seal(plugin string, names []entryName) {
	sealed := false
	for _, n := range names {
		err := c.seal1(n)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.log.Warn("compilation cache: cannot store an entry", "plugin", plugin, "error", err)
		}
		sealed = sealed || err == nil
	}
	if sealed {
		c.trim()
	}
}

// trim deletes the least recently used sealed entries (by modification
// time, which place renews) until those left weigh at most c.max bytes,
// and temporary files older than staleTemp. Every file counts, whatever
// it holds.
func (c *diskCache) trim() {
	ents, err := os.ReadDir(c.sealed)
	if err != nil {
		return
	}
	type entry struct {
		path string
		size int64
		mod  time.Time
	}
	var all []entry
	var total int64
	for _, de := range ents {
		fi, err := de.Info()
		if err != nil || fi.IsDir() {
			continue
		}
		p := filepath.Join(c.sealed, de.Name())
		if strings.HasSuffix(de.Name(), ".tmp") {
			if time.Since(fi.ModTime()) > staleTemp {
				_ = os.Remove(p)
			}
			continue
		}
		all = append(all, entry{p, fi.Size(), fi.ModTime()})
		total += fi.Size()
	}
	if total <= c.max {
		return
	}
	slices.SortFunc(all, func(a, b entry) int { return a.mod.Compare(b.mod) })
	removed := 0
	for _, e := range all {
		if total <= c.max {
			break
		}
		if os.Remove(e.path) == nil {
			total -= e.size
			removed++
		}
	}
	c.log.Info("compilation cache: least recently used entries deleted", "entries", removed, "kept_bytes", total, "limit_bytes", c.max)
}

func (c *diskCache) seal1(n entryName) error {
	f, err := os.Open(filepath.Join(c.files, n.String()))
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() > maxSealedEntry {
		return fmt.Errorf("entry of %d bytes is over the cache's %d", fi.Size(), maxSealedEntry)
	}
	length := uint64(fi.Size())
	out, err := os.CreateTemp(c.sealed, n.String()+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	var hdr [sealHeader]byte
	copy(hdr[:], sealMagic)
	binary.LittleEndian.PutUint64(hdr[len(sealMagic):], length)
	if _, err := out.Write(hdr[:]); err != nil {
		return err
	}
	m := c.mac(n, length)
	got, err := io.Copy(io.MultiWriter(out, m), io.LimitReader(f, int64(length)))
	if err != nil {
		return err
	}
	if uint64(got) != length {
		return fmt.Errorf("entry changed while sealed: %d of %d bytes", got, length)
	}
	if _, err := out.WriteAt(m.Sum(nil), int64(len(sealMagic)+8)); err != nil {
		return err
	}
	if err := out.Sync(); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(out.Name(), filepath.Join(c.sealed, n.String()))
}

// clear removes names from wazero's directory: the compiled module is
// in memory now, and the copy is not needed.
func (c *diskCache) clear(names []entryName) {
	for _, n := range names {
		_ = os.Remove(filepath.Join(c.files, n.String()))
	}
}

// drop deletes names from wazero's directory and from cache_dir.
func (c *diskCache) drop(names []entryName) {
	c.clear(names)
	for _, n := range names {
		_ = os.Remove(filepath.Join(c.sealed, n.String()))
	}
}

// close removes the private directory.
func (c *diskCache) close() error { return os.RemoveAll(c.work) }

// newDiskCache prepares the sealed directory under dir (the engine's
// per-wazero-version cache directory), the key (keyFile, else
// $WASMCP_CACHE_KEY, else os.UserConfigDir()/wasmcp/cache.key; never
// inside root, the configured cache directory) and the private directory
// for wazero; call setFiles once wazero has created its subdirectory.
func newDiskCache(root, dir, keyFile string, log *slog.Logger) (*diskCache, error) {
	path, err := cacheKeyPath(keyFile, root)
	if err != nil {
		return nil, err
	}
	key, err := loadCacheKey(path)
	if err != nil {
		return nil, err
	}
	c := &diskCache{
		sealed: filepath.Join(dir, "sealed-"+goruntime.GOOS+"-"+goruntime.GOARCH),
		values: filepath.Join(dir, "values"),
		key:    key,
		domain: []byte("wasmcp compiled-code cache v1\x00wazero " + wazeroVersion() + "\x00" + goruntime.GOOS + "/" + goruntime.GOARCH + "\x00"),
		log:    log,
		max:    maxCacheBytes,
	}
	if err := os.MkdirAll(c.sealed, 0o700); err != nil {
		return nil, fmt.Errorf("create cache directory: %w", err)
	}
	c.work, err = os.MkdirTemp("", "wasmcp-compiled-")
	if err != nil {
		return nil, fmt.Errorf("create the private compilation directory: %w", err)
	}
	return c, nil
}

// setFiles finds the subdirectory wazero created in the private
// directory (one per wazero version and platform).
func (c *diskCache) setFiles() error {
	ents, err := os.ReadDir(c.work)
	if err != nil {
		return fmt.Errorf("read the private compilation directory: %w", err)
	}
	var dirs []string
	for _, de := range ents {
		if de.IsDir() {
			dirs = append(dirs, de.Name())
		}
	}
	if len(dirs) != 1 {
		return fmt.Errorf("the private compilation directory holds %d directories, want wazero's one", len(dirs))
	}
	c.files = filepath.Join(c.work, dirs[0])
	return nil
}

// cacheKeyPath resolves the cache key's location and refuses one inside
// the cache directory root.
func cacheKeyPath(file, root string) (string, error) {
	if file == "" {
		file = os.Getenv(CacheKeyEnv)
	}
	if file == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("locate the cache key (set %s): %w", CacheKeyEnv, err)
		}
		file = filepath.Join(base, "wasmcp", "cache.key")
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", fmt.Errorf("cache key %s: %w", file, err)
	}
	if within(realPath(abs), realPath(root)) {
		return "", fmt.Errorf("cache key %s is inside the cache directory %s: it must be kept outside it", abs, root)
	}
	return abs, nil
}

// realPath resolves the symbolic links of p's longest existing prefix.
func realPath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// loadCacheKey reads the 32-byte key at path, creating it (0600, its
// directory 0700) on first use. The key is created in a temporary file
// and linked into place, so concurrent first uses agree on one key and
// none reads a partial one.
func loadCacheKey(path string) ([]byte, error) {
	key, err := readCacheKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create the cache key's directory: %w", err)
	}
	fresh := make([]byte, sha256.Size)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("create the cache key: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cache.key-*")
	if err != nil {
		return nil, fmt.Errorf("create the cache key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(fresh)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("create the cache key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create the cache key: %w", err)
	}
	return readCacheKey(path)
}

// readCacheKey reads the key at path: a regular file of 32 bytes that
// only its owner can read or write.
func readCacheKey(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("cache key %s is not a regular file", path)
	}
	if goruntime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("cache key %s is accessible to others (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	if fi.Size() != sha256.Size {
		return nil, fmt.Errorf("cache key %s is %d bytes, want %d", path, fi.Size(), sha256.Size)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the cache key: %w", err)
	}
	defer f.Close()
	key := make([]byte, sha256.Size)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, fmt.Errorf("read the cache key: %w", err)
	}
	return key, nil
}
