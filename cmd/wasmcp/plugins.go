package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"

	"github.com/wasmcp/wasmcp/internal/server"
)

// cmdPlugins lists every plugin the configuration loads, with its source,
// ABI, digest, tools, grants and limits (each loaded as `inspect` does). A
// plugin that fails to load is listed with its error, and the exit code
// is 1.
func cmdPlugins(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("plugins", flag.ContinueOnError)
	var cf configFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the list as JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("plugins: unexpected argument %q", pos[0])
	}
	cfg, err := cf.load()
	if err != nil {
		return err
	}
	ls, err := server.List(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(ls); err != nil {
			return err
		}
	} else {
		server.WriteListings(os.Stdout, ls)
	}
	for _, l := range ls {
		if l.Report == nil && l.Path != "" {
			return errors.New("plugins: not every plugin loads (see error lines)")
		}
	}
	return nil
}
