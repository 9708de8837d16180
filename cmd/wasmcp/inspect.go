package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"

	"github.com/wasmcp/wasmcp/internal/server"
)

func cmdInspect(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	var cf configFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("inspect: want one PLUGIN.wasm")
	}
	if _, err := os.Stat(pos[0]); err != nil {
		return usageError{err}
	}
	cfg, err := cf.load()
	if err != nil {
		return err
	}
	rep, err := server.Inspect(ctx, cfg, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.WriteText(os.Stdout)
	return nil
}
