package plugins

import (
	"fmt"
	"regexp"
)

// namePattern is the rule for every name a client sees (tools, prompts)
// and for plugin names.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidName reports whether s may be exposed to clients as a tool, prompt
// or plugin name.
func ValidName(s string) bool { return namePattern.MatchString(s) }

func checkName(kind, s string) error {
	if !ValidName(s) {
		return fmt.Errorf("%s name %q does not match %s", kind, s, namePattern)
	}
	return nil
}
