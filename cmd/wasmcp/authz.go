package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wasmcp/wasmcp/internal/server"
)

// errDenied is `authz check`'s deny: exit 1, the answer already printed.
var errDenied = exitError{1}

// cmdAuthz runs `wasmcp authz check`: it loads the configuration and
// its plugins as serve does and prints what the server would decide:
// allow or deny, then the policies that decided. Exit 0 allow, 1 deny,
// 2 a usage or configuration error.
func cmdAuthz(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "check" {
		return usagef("authz: want check (wasmcp authz check --config FILE --principal 'Client::\"alice\"' --action call_tool --resource 'Tool::\"name\"')")
	}
	fs := newConfigCmd("authz check")
	principal := fs.String("principal", `Client::"stdio"`, `the caller: Client::"<sub>", Client::"stdio" or Anonymous::"anonymous"`)
	claims := fs.String("claims", "", `the caller's token claims, a JSON object (e.g. '{"groups":["admins"]}')`)
	action := fs.String("action", "call_tool", "call_tool, read_resource, get_prompt or complete")
	resource := fs.String("resource", "", `Tool::"<name>", Prompt::"<name>" or Resource::"<uri>"`)
	argsJSON := fs.String("args", "", "the call's arguments, a JSON object")
	listing := fs.Bool("listing", false, "decide as a list would show the item (context.listing, no arguments)")
	protoVersion := fs.String("protocol-version", "", "context.protocolVersion (default 2025-11-25)")
	cfg, _, err := fs.load(args[1:], func(pos []string) error {
		if len(pos) > 0 {
			return usagef("authz check: unexpected argument %q", pos[0])
		}
		if *resource == "" {
			return usagef(`authz check: --resource is required (Tool::"name", Prompt::"name" or Resource::"uri")`)
		}
		for _, j := range []struct{ flag, v string }{{"claims", *claims}, {"args", *argsJSON}} {
			if j.v != "" && !json.Valid([]byte(j.v)) {
				return usagef("authz check: --%s is not valid JSON: %s", j.flag, j.v)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !cfg.Authz.Enabled() {
		return usageError{server.ErrNoAuthz}
	}
	srv, err := server.New(ctx, cfg, server.Options{Version: version(), Logger: newLogger("warn", cfg.Server.LogFormat)})
	if err != nil {
		return usageError{err}
	}
	defer srv.Close(context.WithoutCancel(ctx))
	c := server.AuthzCheck{Principal: *principal, Action: *action, Resource: *resource, ProtocolVersion: *protoVersion, Listing: *listing}
	if *claims != "" {
		c.Claims = json.RawMessage(*claims)
	}
	if *argsJSON != "" {
		c.Arguments = json.RawMessage(*argsJSON)
	}
	res, err := srv.CheckAuthz(ctx, c)
	if err != nil {
		return usageError{fmt.Errorf("authz check: %w", err)}
	}
	fmt.Print(formatDecision(res))
	if !res.Allow {
		return errDenied
	}
	return nil
}

// formatDecision is what `authz check` prints: allow or deny, the
// policies that decided, and the policies that failed to evaluate.
func formatDecision(res server.AuthzResult) string {
	var b strings.Builder
	switch {
	case res.Allow:
		b.WriteString("allow\npermitted by: " + strings.Join(res.Policies, ", ") + "\n")
	case len(res.Policies) > 0:
		b.WriteString("deny\nforbidden by: " + strings.Join(res.Policies, ", ") + "\n")
	default:
		b.WriteString("deny\nno policy permits it (default deny)\n")
	}
	for _, e := range res.Errors {
		b.WriteString("not applied (evaluation error): " + e + "\n")
	}
	return b.String()
}

// exitError ends the process with its code, printing nothing more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// exitCode is the code of an exitError in err, or 0.
func exitCode(err error) int {
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 0
}
