package main

import (
	"context"
	"os"

	"github.com/wasmcp/wasmcp/internal/server"
)

func cmdInspect(ctx context.Context, args []string) error {
	fs := newConfigCmd("inspect")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	cfg, pos, err := fs.load(args, func(pos []string) error {
		if len(pos) != 1 {
			return usagef("inspect: want one PLUGIN.wasm")
		}
		if _, err := os.Stat(pos[0]); err != nil {
			return usageError{err}
		}
		return nil
	})
	if err != nil {
		return err
	}
	rep, err := server.Inspect(ctx, cfg, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	rep.WriteText(os.Stdout)
	return nil
}
