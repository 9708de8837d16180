package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/skills"
	"github.com/wasmcp/wasmcp/plugins"
)

// skillSource serves the skills of the [[skills]] directories and of the
// loaded plugins' manifests as one skills.Set. Directory skills keep
// their name as skill path (skill://<name>/SKILL.md); a plugin's skills
// are under its name (skill://<plugin>/<name>/SKILL.md), so two copies
// of one plugin loaded under two names serve their skills side by side.
type skillSource struct {
	dirs []config.SkillDir
	reg  *plugins.Registry
	log  *slog.Logger

	mu      sync.Mutex
	dirSet  []*skills.Skill   // from the directories, last load
	plugins []*plugins.Plugin // the plugins set was built from
	set     *skills.Set
	built   bool
}

func newSkillSource(dirs []config.SkillDir, reg *plugins.Registry, log *slog.Logger) (*skillSource, error) {
	s := &skillSource{dirs: dirs, reg: reg, log: log}
	err := s.loadDirs()
	return s, err
}

// loadDirs reads every directory; the skills that load are kept, the
// failures returned (joined).
func (s *skillSource) loadDirs() error {
	var all []*skills.Skill
	var errs []error
	for _, d := range s.dirs {
		got, err := skills.LoadDir(d.Dir)
		all = append(all, got...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	s.mu.Lock()
	changed := !sameSkills(s.dirSet, all)
	if changed {
		s.dirSet, s.built = all, false
	}
	s.mu.Unlock()
	return errors.Join(errs...)
}

func sameSkills(a, b []*skills.Skill) bool {
	return slices.EqualFunc(a, b, func(x, y *skills.Skill) bool { return string(x.Entry()) == string(y.Entry()) })
}

// current returns the set for the plugins now loaded, rebuilt when they
// or the directories changed.
func (s *skillSource) current() *skills.Set {
	ps := s.reg.Plugins()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.built && slices.Equal(ps, s.plugins) {
		return s.set
	}
	all := slices.Clone(s.dirSet)
	for _, p := range ps {
		m := p.Manifest()
		if m == nil {
			continue
		}
		for _, ms := range m.Skills {
			sk, err := pluginSkill(p, ms)
			if err != nil {
				s.log.Warn("plugin skill refused", "plugin", p.Name(), "error", err)
				continue
			}
			all = append(all, sk)
		}
	}
	set, err := skills.NewSet(all)
	if err != nil {
		s.log.Error("skills collide", "error", err)
	}
	s.set, s.plugins, s.built = set, ps, true
	return set
}

// pluginSkill builds one skill of p's manifest, under p's name
// (skill://<plugin>/<name>/...).
func pluginSkill(p *plugins.Plugin, ms plugins.ManifestSkill) (*skills.Skill, error) {
	files := make(map[string][]byte, len(ms.Files))
	for k, v := range ms.Files {
		files[k] = []byte(v)
	}
	return skills.New(skillSegment(p.Name())+"/", files, "plugin "+p.Name())
}

// skillSegment turns a plugin name into a skill path segment: lower
// case, "_" and other characters as "-", no doubled or edge hyphens.
func skillSegment(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	out := strings.TrimRight(b.String(), "-")
	if out == "" {
		out = "plugin"
	}
	return out
}

// watch reloads the directories every interval until ctx ends, calling
// changed after a change.
func (s *skillSource) watch(ctx context.Context, interval time.Duration, changed func()) {
	if len(s.dirs) == 0 {
		return
	}
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		before := s.dirSet
		s.mu.Unlock()
		if err := s.loadDirs(); err != nil {
			s.log.Error("skills reload finished with errors", "error", err)
		}
		s.mu.Lock()
		after := s.dirSet
		s.mu.Unlock()
		if !sameSkills(before, after) {
			changed()
		}
	}
}

// errSkillDirs wraps a [[skills]] load failure at start.
func errSkillDirs(err error) error { return fmt.Errorf("skills: %w", err) }
