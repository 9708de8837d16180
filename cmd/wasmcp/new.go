package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/wasmcp/wasmcp/internal/scaffold"
)

// cmdNew scaffolds a plugin project (internal/scaffold).
func cmdNew(args []string) error {
	fs := flag.NewFlagSet("new", flag.ContinueOnError)
	lang := fs.String("lang", "", "language: "+strings.Join(scaffold.Languages(), ", "))
	dir := fs.String("dir", "", "project directory (default ./NAME)")
	withApp := fs.Bool("with-app", false, "add an MCP App (Go): app.html as ui://NAME/view, greet linked to it, an app-only tool the app calls")
	sdk := fs.String("sdk", "", "wasmcp checkout whose SDK files the project uses instead of the ones built into wasmcp (a Go project's go.mod then points at it)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("new: want --lang LANG NAME")
	}
	if *lang == "" {
		return usagef("new: --lang is required (%s)", strings.Join(scaffold.Languages(), ", "))
	}
	name := pos[0]
	if *dir == "" {
		*dir = name
	}
	if err := scaffold.Write(*dir, *lang, name, scaffold.Options{SDKRoot: *sdk, WithApp: *withApp}); err != nil {
		return usageError{fmt.Errorf("new: %w", err)}
	}
	fmt.Fprintf(os.Stderr, "wasmcp: created %s (%s); build it with: cd %s && ./build.sh\n", *dir, *lang, *dir)
	fmt.Fprintf(os.Stderr, "wasmcp: then try it: wasmcp call --plugins %s/%s.wasm greet '{\"name\":\"Ada\"}'\n", *dir, name)
	return nil
}
