package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/wasmcp/wasmcp/internal/config"
)

// buildVersion is set with -ldflags "-X main.buildVersion=v1.2.3".
var buildVersion string

func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// configFlags are the flags every command that loads plugins takes.
type configFlags struct {
	file    string
	plugins multiFlag
}

func (c *configFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.file, "config", "", "configuration file (default ./wasmcp.toml if present)")
	fs.Var(&c.plugins, "plugins", "directory of plugins to load (repeatable)")
}

// load reads the configuration: --config, else ./wasmcp.toml when it
// exists and no --plugins was given, else the defaults; --plugins
// directories are added.
func (c *configFlags) load() (*config.Config, error) {
	file := c.file
	if file == "" && len(c.plugins) == 0 {
		if _, err := os.Stat("wasmcp.toml"); err == nil {
			file = "wasmcp.toml"
		}
	}
	cfg := config.Default()
	if file != "" {
		var err error
		cfg, err = config.Load(file)
		if err != nil {
			return nil, usageError{fmt.Errorf("config %s: %w", file, err)}
		}
	}
	for _, d := range c.plugins {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, usageError{err}
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, usagef("--plugins %s: not a directory", d)
		}
		cfg.Server.PluginDirs = append(cfg.Server.PluginDirs, abs)
	}
	if err := cfg.Validate(); err != nil {
		return nil, usageError{fmt.Errorf("config: %w", err)}
	}
	return cfg, nil
}

// newLogger is the server's log on stderr: text or, with [server]
// log_format = "json", one JSON object a line.
func newLogger(level, format string) *slog.Logger {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn", "warning":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	}
	o := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, o))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, o))
}

// parseFlags parses args with fs; -h prints usage. Flags may come after
// positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(os.Stderr)
				fs.Usage()
				return nil, usagef("help requested")
			}
			return nil, usageError{err}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
