package config

import (
	"errors"
	"strings"
)

// Authz is the [authz] table: authorization by Cedar policies
// (docs/governance.md). Once Policies is set, nothing is allowed unless
// a policy permits it, and a forbid policy always wins.
type Authz struct {
	// Policies is a .cedar file, or a directory whose *.cedar files are
	// read in name order; relative to the configuration file. Empty
	// turns authorization off.
	Policies string `toml:"policies" json:"policies,omitempty"`
	// Entities is an optional JSON file of Cedar entities (groups and
	// their parents, attributes of clients and plugins), relative to the
	// configuration file.
	Entities string `toml:"entities" json:"entities,omitempty"`
	// GroupsClaim names the token claim whose strings become the
	// caller's Group parents. Default "groups".
	GroupsClaim string `toml:"groups_claim" json:"groups_claim,omitempty"`
}

// Enabled reports whether policies are configured.
func (a *Authz) Enabled() bool { return a.Policies != "" }

// checkAuthz checks the [authz] table; the files are read by the server.
func checkAuthz(a *Authz) []error {
	var errs []error
	if !a.Enabled() && (a.Entities != "" || a.GroupsClaim != "") {
		errs = append(errs, errors.New("authz: entities and groups_claim need policies = \"policy.cedar\" (a file or a directory)"))
	}
	if a.GroupsClaim != "" && strings.TrimSpace(a.GroupsClaim) != a.GroupsClaim {
		errs = append(errs, errors.New("authz.groups_claim: must not start or end with spaces"))
	}
	return errs
}
