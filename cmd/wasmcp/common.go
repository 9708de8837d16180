package main

import (
	"encoding/json"
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

// version is what `wasmcp version` prints and serverInfo.version says:
// buildVersion, else what the build info knows (see versionOf).
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi)
}

// versionOf is the version of a binary with build info bi: the module
// version (a tag, or the pseudo-version Go derives from the VCS, with
// +dirty for uncommitted changes), else "dev" followed by the VCS
// revision (+rev, with .dirty when modified) when the build recorded one,
// else "dev" (e.g. a build with -buildvcs=false).
func versionOf(bi *debug.BuildInfo) string {
	if bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "dev+" + rev
	if modified {
		v += ".dirty"
	}
	return v
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
	fs.Var(&c.plugins, "plugins", "directory of plugins, or one .wasm file, to load (repeatable)")
}

// configCmd is the flag set of a command that loads the configuration:
// the [configFlags] and the command's own flags, defined on it before
// [configCmd.load].
type configCmd struct {
	*flag.FlagSet
	cf configFlags
}

func newConfigCmd(name string) *configCmd {
	c := &configCmd{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError)}
	c.cf.register(c.FlagSet)
	return c
}

// load parses args (see [parseFlags]), has check vet the positional
// arguments before anything is loaded (nil: the command takes none), and
// loads the configuration (see [configFlags.load]).
func (c *configCmd) load(args []string, check func(pos []string) error) (*config.Config, []string, error) {
	pos, err := parseFlags(c.FlagSet, args)
	if err != nil {
		return nil, nil, err
	}
	if check == nil && len(pos) > 0 {
		err = usagef("%s: unexpected argument %q", c.Name(), pos[0])
	} else if check != nil {
		err = check(pos)
	}
	if err != nil {
		return nil, nil, err
	}
	cfg, err := c.cf.load()
	if err != nil {
		return nil, nil, err
	}
	return cfg, pos, nil
}

// printJSON writes v on stdout as indented JSON, for the commands' --json.
func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// load reads the configuration: --config, else ./wasmcp.toml when it
// exists and no --plugins was given, else the defaults; --plugins
// directories are added, and a --plugins FILE.wasm becomes a [[plugins]]
// entry named after the file, with the default limits and no grants.
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
		fi, err := os.Stat(abs)
		switch {
		case err != nil:
			return nil, usagef("--plugins %s: %w", d, errors.Unwrap(err))
		case fi.Mode().IsRegular() && strings.HasSuffix(abs, ".wasm"):
			cfg.Plugins = append(cfg.Plugins, config.Plugin{Name: pluginName(abs), Path: abs})
		case !fi.IsDir():
			return nil, usagef("--plugins %s: neither a directory nor a .wasm file", d)
		default:
			cfg.Server.PluginDirs = append(cfg.Server.PluginDirs, abs)
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, usageError{fmt.Errorf("config: %w", err)}
	}
	if err := cfg.CheckFiles(); err != nil {
		if file != "" {
			return nil, usageError{fmt.Errorf("config %s: %w", file, err)}
		}
		return nil, usageError{fmt.Errorf("config: %w", err)}
	}
	return cfg, nil
}

// pluginName is the [[plugins]] name of a plugin given as --plugins FILE:
// the file name without .wasm, with characters a name cannot have
// replaced by '_'.
func pluginName(path string) string {
	n := []byte(strings.TrimSuffix(filepath.Base(path), ".wasm"))
	if len(n) > 64 {
		n = n[:64]
	}
	for i, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			n[i] = '_'
		}
	}
	if len(n) == 0 {
		return "plugin"
	}
	return string(n)
}

// errHelp is returned for -h and --help once the usage is printed: exit 0.
var errHelp = errors.New("help requested")

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

// parseFlags parses args with fs; -h and --help print the usage on stdout
// and return errHelp. Flags may come after positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(os.Stdout)
				fs.Usage()
				return nil, errHelp
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
