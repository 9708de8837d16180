package main

import (
	"context"
	"errors"
	"os"

	"github.com/wasmcp/wasmcp/internal/server"
)

// cmdPlugins lists every plugin the configuration loads, with its source,
// ABI, digest, tools, grants and limits (each loaded as `inspect` does). A
// plugin that fails to load is listed with its error, and the exit code
// is 1.
func cmdPlugins(ctx context.Context, args []string) error {
	fs := newConfigCmd("plugins")
	asJSON := fs.Bool("json", false, "print the list as JSON")
	cfg, _, err := fs.load(args, nil)
	if err != nil {
		return err
	}
	ls, err := server.List(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := printJSON(ls); err != nil {
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
