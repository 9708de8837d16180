package plugins

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// Watch polls the plugin files every interval (default 1s) and reloads
// when one was added, removed or changed. specs is called on each poll to
// list the current plugins (so files dropped into a plugin directory are
// seen). A change is applied once two polls in a row agree, so a file
// caught half-written is not loaded. Watch returns when ctx is done.
func (r *Registry) Watch(ctx context.Context, interval time.Duration, specs func() ([]Spec, error)) {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	last := fingerprint(r.specs())
	pending := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		list, err := specs()
		if err != nil {
			r.log.Error("watch: listing plugins failed", "error", err)
			continue
		}
		fp := fingerprint(list)
		switch {
		case fp == last:
			pending = ""
		case fp != pending:
			pending = fp // changed: wait one more poll for it to settle
		default:
			r.log.Info("plugin files changed; reloading")
			if err := r.Reload(ctx, list); err != nil {
				r.log.Error("reload finished with errors", "error", err)
			}
			last, pending = fp, ""
		}
	}
}

// fingerprint summarizes specs and the size and modification time of
// their files.
func fingerprint(specs []Spec) string {
	var b strings.Builder
	for _, s := range specs {
		fi, err := os.Stat(s.Path)
		if err != nil {
			fmt.Fprintf(&b, "%s|missing\n", s.Path)
			continue
		}
		fmt.Fprintf(&b, "%s|%d|%d|%v\n", s.Path, fi.Size(), fi.ModTime().UnixNano(), specKey(s))
	}
	return b.String()
}
