// Package skills loads Agent Skills and serves them as the Skills
// extension of MCP (io.modelcontextprotocol/skills) describes: one
// skill:// resource per file, and a Skill entry ({uri, frontmatter,
// resources}) with a sha256 digest and the size of every file.
//
// A skill is a directory holding a SKILL.md whose YAML front matter has
// at least name and description; its other files are supporting files.
// Skill files are data: they are read, hashed and served, never run.
// Loading is bounded (files per skill, bytes per skill, directory depth)
// and refuses symbolic links and anything that is not a regular file or
// a directory, so a skill directory cannot make the server read outside
// it.
package skills

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// The limits of ext-skills ("Limits"): a host must accept skills up to
// these and a server should not serve larger ones, so loading refuses
// them.
const (
	MaxFiles = 512
	MaxBytes = 16 << 20
	// MaxDepth bounds the directory nesting inside one skill.
	MaxDepth = 16
	// maxNameLen and maxDescLen are the Agent Skills limits on name and
	// description.
	maxNameLen = 64
	maxDescLen = 1024
)

// ErrLimit is wrapped by the error of a skill over MaxFiles, MaxBytes or
// MaxDepth.
var ErrLimit = errors.New("skill over a limit")

// File is one file of a skill.
type File struct {
	URI    string // skill://<skill-path>/<file-path>
	Path   string // the file's path inside the skill, "/"-separated
	Data   []byte
	Digest string // "sha256:" + 64 lower-case hex digits
	MIME   string
}

// Skill is one loaded skill.
type Skill struct {
	Name  string // front matter name = last segment of the skill path
	URI   string // the URI of its SKILL.md
	Path  string // the skill path (the URI's authority and path before /SKILL.md)
	Files []File // SKILL.md first, then the others by path
	// Origin says where the skill came from (a directory, a plugin), for
	// error messages.
	Origin      string
	frontmatter json.RawMessage
	description string
}

// Entry returns the skill's ext-skills Skill entry.
func (s *Skill) Entry() json.RawMessage {
	type res struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int    `json:"size"`
	}
	rs := make([]res, len(s.Files))
	for i, f := range s.Files {
		rs[i] = res{f.URI, f.Digest, len(f.Data)}
	}
	b, _ := json.Marshal(struct {
		URI         string          `json:"uri"`
		Frontmatter json.RawMessage `json:"frontmatter"`
		Resources   []res           `json:"resources"`
	}{s.URI, s.frontmatter, rs})
	return b
}

// New builds a skill from its files (path inside the skill -> content),
// under skill path prefix+name ("" or a "/"-ended prefix of segments):
// the way plugins hand over skills embedded in them. The files must
// include SKILL.md.
func New(prefix string, files map[string][]byte, origin string) (*Skill, error) {
	md, ok := files["SKILL.md"]
	if !ok {
		return nil, fmt.Errorf("skill from %s: no SKILL.md", origin)
	}
	fm, name, desc, err := parseSkillMD(md)
	if err != nil {
		return nil, fmt.Errorf("skill from %s: SKILL.md: %w", origin, err)
	}
	if len(files) > MaxFiles {
		return nil, fmt.Errorf("skill %q from %s: %d files: %w (at most %d)", name, origin, len(files), ErrLimit, MaxFiles)
	}
	if prefix != "" && (!strings.HasSuffix(prefix, "/") || !validPrefix(strings.TrimSuffix(prefix, "/"))) {
		return nil, fmt.Errorf("skill %q from %s: bad skill path prefix %q", name, origin, prefix)
	}
	s := &Skill{Name: name, Path: prefix + name, Origin: origin, frontmatter: fm, description: desc}
	s.URI = "skill://" + s.Path + "/SKILL.md"
	total := 0
	paths := make([]string, 0, len(files))
	for p, data := range files {
		if err := checkFilePath(p); err != nil {
			return nil, fmt.Errorf("skill %q from %s: %w", name, origin, err)
		}
		total += len(data)
		if total > MaxBytes {
			return nil, fmt.Errorf("skill %q from %s: %w (more than %d bytes)", name, origin, ErrLimit, MaxBytes)
		}
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool {
		if (paths[i] == "SKILL.md") != (paths[j] == "SKILL.md") {
			return paths[i] == "SKILL.md"
		}
		return paths[i] < paths[j]
	})
	for _, p := range paths {
		data := files[p]
		sum := sha256.Sum256(data)
		s.Files = append(s.Files, File{
			URI: "skill://" + s.Path + "/" + p, Path: p, Data: data,
			Digest: "sha256:" + hex.EncodeToString(sum[:]), MIME: mimeOf(p),
		})
	}
	return s, nil
}

// checkFilePath refuses a file path that is not a clean, relative,
// "/"-separated UTF-8 path (no "..", no empty or "." segments, no
// backslashes or control characters).
func checkFilePath(p string) error {
	if p == "" || !utf8.ValidString(p) || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\?#%") || path.Clean(p) != p {
		return fmt.Errorf("file path %q: not a clean relative path", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return fmt.Errorf("file path %q: not a clean relative path", p)
		}
		for _, r := range seg {
			if r < 0x20 || r == 0x7f {
				return fmt.Errorf("file path %q: control character", p)
			}
		}
	}
	if strings.Count(p, "/") >= MaxDepth {
		return fmt.Errorf("file path %q: %w (nested deeper than %d)", p, ErrLimit, MaxDepth)
	}
	return nil
}

// validPrefix reports whether prefix ("a/b") is made of segments that
// follow the skill naming rules, so the first is a valid URI authority.
func validPrefix(prefix string) bool {
	for _, seg := range strings.Split(prefix, "/") {
		if checkName(seg) != nil {
			return false
		}
	}
	return true
}

// checkName applies the Agent Skills rules for a name: 1 to 64 of a-z,
// 0-9 and "-", not starting or ending with "-", no "--".
func checkName(n string) error {
	if n == "" || len(n) > maxNameLen {
		return fmt.Errorf("name %q: must be 1 to %d characters", n, maxNameLen)
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("name %q: only lower-case letters, digits and hyphens", n)
		}
	}
	if n[0] == '-' || n[len(n)-1] == '-' || strings.Contains(n, "--") {
		return fmt.Errorf("name %q: no leading, trailing or doubled hyphen", n)
	}
	return nil
}

func mimeOf(p string) string {
	switch ext := strings.ToLower(path.Ext(p)); ext {
	case ".md":
		return "text/markdown"
	case ".txt", "":
		return "text/plain"
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
	}
	return "application/octet-stream"
}

// LoadDir loads every skill of dir: each subdirectory holding a SKILL.md
// is one skill, whose front matter name must equal the subdirectory's
// name. Subdirectories without SKILL.md are skipped; entries that are not
// directories are ignored. Every skill that fails is an error (joined);
// the others load.
func LoadDir(dir string) ([]*Skill, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("skills dir: %w", err)
	}
	var out []*Skill
	var errs []error
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if _, err := os.Lstat(filepath.Join(sub, "SKILL.md")); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		s, err := loadSkillDir(sub)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if s.Name != e.Name() {
			errs = append(errs, fmt.Errorf("skill %s: front matter name %q differs from the directory name", sub, s.Name))
			continue
		}
		out = append(out, s)
	}
	return out, errors.Join(errs...)
}

// loadSkillDir reads one skill directory, bounded by the limits, without
// following symbolic links.
func loadSkillDir(dir string) (*Skill, error) {
	files := map[string][]byte{}
	total := 0
	var walk func(rel string, depth int) error
	walk = func(rel string, depth int) error {
		if depth > MaxDepth {
			return fmt.Errorf("%s: %w (nested deeper than %d)", rel, ErrLimit, MaxDepth)
		}
		ents, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		for _, e := range ents {
			p := path.Join(rel, e.Name())
			switch t := e.Type(); {
			case t.IsDir():
				if err := walk(p, depth+1); err != nil {
					return err
				}
				continue
			case !t.IsRegular():
				return fmt.Errorf("%s: not a regular file or directory (symbolic links are refused)", p)
			}
			if len(files) >= MaxFiles {
				return fmt.Errorf("%w (more than %d files)", ErrLimit, MaxFiles)
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			if total+int(fi.Size()) > MaxBytes {
				return fmt.Errorf("%w (more than %d bytes)", ErrLimit, MaxBytes)
			}
			data, err := readBounded(filepath.Join(dir, filepath.FromSlash(p)), MaxBytes-total)
			if err != nil {
				return err
			}
			total += len(data)
			files[p] = data
		}
		return nil
	}
	if err := walk("", 0); err != nil {
		return nil, fmt.Errorf("skill %s: %w", dir, err)
	}
	return New("", files, dir)
}

// readBounded reads a regular file (not following a link at the last
// element) of at most limit bytes.
func readBounded(name string, limit int) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	buf, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(buf) > limit {
		return nil, fmt.Errorf("%s: %w (more than %d bytes)", name, ErrLimit, MaxBytes)
	}
	return buf, nil
}

// Set is the skills a server serves, indexed by URI. It is immutable
// once built.
type Set struct {
	skills []*Skill
	files  map[string]*File
	// dirs are the directory resources (directory URI -> its direct
	// children's Resource objects, by URI): every skill root, every
	// directory inside a skill, and every level of the skill paths'
	// prefixes.
	dirs map[string][]json.RawMessage
}

// NewSet indexes skills. Two skills at one skill path are a collision:
// an error naming both origins, and neither is served (never a silent
// winner).
func NewSet(skills []*Skill) (*Set, error) {
	s := &Set{files: map[string]*File{}}
	by := map[string]*Skill{}
	bad := map[string]bool{}
	var errs []error
	for _, sk := range skills {
		if o, ok := by[sk.Path]; ok {
			errs = append(errs, fmt.Errorf("skill %q: served by both %s and %s; neither is served", sk.URI, o.Origin, sk.Origin))
			bad[sk.Path] = true
			continue
		}
		by[sk.Path] = sk
	}
	for _, sk := range skills {
		if bad[sk.Path] || by[sk.Path] != sk {
			continue
		}
		s.skills = append(s.skills, sk)
	}
	sort.Slice(s.skills, func(i, j int) bool { return s.skills[i].Path < s.skills[j].Path })
	for _, sk := range s.skills {
		for i := range sk.Files {
			s.files[sk.Files[i].URI] = &sk.Files[i]
		}
	}
	s.indexDirs()
	return s, errors.Join(errs...)
}

// DirMIME is the MIME type of a directory resource (ext-skills).
const DirMIME = "inode/directory"

// indexDirs builds dirs from the files: each file is a child of its
// directory, each directory of its parent, up to the first segment of the
// skill path (skill://<first>), which has no parent.
func (s *Set) indexDirs() {
	children := map[string]map[string]json.RawMessage{}
	add := func(dir, uri string, item json.RawMessage) {
		if children[dir] == nil {
			children[dir] = map[string]json.RawMessage{}
		}
		if _, ok := children[dir][uri]; !ok {
			children[dir][uri] = item
		}
	}
	res := s.Resources()
	i := 0
	for _, sk := range s.skills {
		for _, f := range sk.Files {
			item := res[i]
			i++
			child := f.URI
			for {
				cut := strings.LastIndexByte(child, '/')
				if cut <= len("skill://") {
					break
				}
				dir := child[:cut]
				add(dir, child, item)
				b, _ := json.Marshal(map[string]string{"uri": dir, "name": dir[strings.LastIndexByte(dir, '/')+1:], "mimeType": DirMIME})
				child, item = dir, b
			}
		}
	}
	s.dirs = make(map[string][]json.RawMessage, len(children))
	for dir, kids := range children {
		uris := make([]string, 0, len(kids))
		for u := range kids {
			uris = append(uris, u)
		}
		sort.Strings(uris)
		list := make([]json.RawMessage, len(uris))
		for j, u := range uris {
			list[j] = kids[u]
		}
		s.dirs[dir] = list
	}
}

// Directory returns the Resource objects of the direct children of the
// directory resource uri (no trailing slash), ok false when uri is not
// one: resources/directory/read of ext-skills.
func (s *Set) Directory(uri string) (children []json.RawMessage, ok bool) {
	if s == nil {
		return nil, false
	}
	children, ok = s.dirs[uri]
	return children, ok
}

// Skills returns the skills by skill path.
func (s *Set) Skills() []*Skill {
	if s == nil {
		return nil
	}
	return s.skills
}

// Entries returns the Skill entries, by skill path.
func (s *Set) Entries() []json.RawMessage {
	if s == nil {
		return nil
	}
	out := make([]json.RawMessage, len(s.skills))
	for i, sk := range s.skills {
		out[i] = sk.Entry()
	}
	return out
}

// Resources returns one MCP Resource per file, by skill then file: the
// SKILL.md with the front matter's name and description (ext-skills
// "Resource Metadata"), every file with its size.
func (s *Set) Resources() []json.RawMessage {
	if s == nil {
		return nil
	}
	var out []json.RawMessage
	for _, sk := range s.skills {
		for _, f := range sk.Files {
			r := map[string]any{"uri": f.URI, "name": sk.Name + "/" + f.Path, "mimeType": f.MIME, "size": len(f.Data)}
			if f.Path == "SKILL.md" {
				r["name"], r["description"] = sk.Name, sk.description
			}
			b, _ := json.Marshal(r)
			out = append(out, b)
		}
	}
	return out
}

// Read returns the ReadResourceResult of the file at uri, ok false if no
// skill has it. UTF-8 files come as text, others as base64 blob.
func (s *Set) Read(uri string) (res json.RawMessage, ok bool) {
	if s == nil {
		return nil, false
	}
	f, ok := s.files[uri]
	if !ok {
		return nil, false
	}
	c := map[string]any{"uri": f.URI, "mimeType": f.MIME}
	if utf8.Valid(f.Data) {
		c["text"] = string(f.Data)
	} else {
		c["blob"] = base64.StdEncoding.EncodeToString(f.Data)
	}
	b, _ := json.Marshal(map[string]any{"contents": []any{c}})
	return b, true
}
