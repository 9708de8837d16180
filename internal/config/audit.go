package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Audit is the [audit] table: the audit trail, one JSON event per line
// (docs/governance.md, "Audit trail"). Off when File is empty.
type Audit struct {
	// File is the sink: a path (relative to the configuration file),
	// rotated by size, or "stderr" (also "-") for standard error, not
	// rotated. Empty turns the audit trail off.
	File string `toml:"file" json:"file,omitempty"`
	// MaxSize is the size past which the file is rotated to File.1, the
	// older ones moving to File.2 … File.MaxFiles. Default 64MiB.
	MaxSize Size `toml:"max_size" json:"max_size"`
	// MaxFiles is how many rotated files are kept besides File. Default 5.
	MaxFiles int `toml:"max_files" json:"max_files"`
	// IncludeData keeps each call's request and response data in its
	// event, secret-looking keys redacted. Default false.
	IncludeData bool `toml:"include_data" json:"include_data,omitempty"`
	// MaxData caps each of the request and the response data of an
	// event. Default 4KiB.
	MaxData Size `toml:"max_data" json:"max_data"`
}

// Audit trail bounds.
const (
	// minAuditSize is the least max_size: a few events per file.
	minAuditSize = 4 << 10
	// maxAuditFiles is the most rotated files kept.
	maxAuditFiles = 1000
	// maxAuditData is the largest max_data.
	maxAuditData = 1 << 20
)

// Enabled reports whether the audit trail is on.
func (a *Audit) Enabled() bool { return a.File != "" }

// IsZero reports whether the table is off and sets nothing that matters
// (the rendered configuration then leaves it out).
func (a Audit) IsZero() bool { return a.File == "" && !a.IncludeData }

// Stderr reports whether the audit trail goes to standard error.
func (a *Audit) Stderr() bool { return a.File == "stderr" || a.File == "-" }

// checkAudit checks the [audit] table; the file is opened by the server.
func checkAudit(a *Audit) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("audit."+format, args...)) }
	if b := filepath.Base(a.File); a.File != "" && (strings.TrimSpace(b) != b || strings.TrimSpace(a.File) != a.File) {
		bad("file: %q must not start or end with spaces", a.File)
	}
	if !a.Enabled() && a.IncludeData {
		errs = append(errs, errors.New("audit: include_data needs file = \"audit.jsonl\" (or \"stderr\")"))
	}
	if a.MaxSize < minAuditSize {
		bad("max_size: %s is less than %s", a.MaxSize, Size(minAuditSize))
	}
	if a.MaxFiles < 1 || a.MaxFiles > maxAuditFiles {
		bad("max_files: %d is not between 1 and %d", a.MaxFiles, maxAuditFiles)
	}
	if a.MaxData == 0 || a.MaxData > maxAuditData {
		bad("max_data: %s is not between 1B and %s", a.MaxData, Size(maxAuditData))
	}
	return errs
}
