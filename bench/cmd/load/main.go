// Command load is the load generator of wasmcp's benchmarks. It starts a
// server process (any command line) and drives it over MCP:
//
//	load stdio     [flags] -- CMD [ARG...]   N tools/call in flight on the server's stdio
//	load http      [flags] -- CMD [ARG...]   C keep-alive clients POSTing stateless 2026-07-28 calls
//	                                          to the URL the server prints on stderr (or -url)
//	load coldstart [flags] -- CMD [ARG...]   process start to the first tools/list answer
//	load runaway   [flags] -- CMD [ARG...]   deadline overshoot of an endless tool, and another
//	                                          plugin's latency meanwhile
//	load summary   FILE...                   Markdown tables of medians and ratios from -json output
//	load copies    -n N -o DIR SRC.wasm      N distinct copies of a plugin (for the cold start)
//
// Every response is validated (see package loadgen). Each check prints a
// line for humans; -json FILE appends a JSON line per run for `load
// summary`. Run `load CMD -h` for the flags of each command.
package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wasmcp/wasmcp/bench/internal/loadgen"
)

// commands are load's subcommands, by name.
var commands = map[string]func(args []string) error{
	"stdio":     cmdStdio,
	"http":      cmdHTTP,
	"coldstart": cmdColdStart,
	"runaway":   cmdRunaway,
	"summary":   cmdSummary,
	"copies":    cmdCopies,
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		switch os.Args[1] {
		case "-h", "-help", "--help", "help":
		default:
			fmt.Fprintf(os.Stderr, "load: unknown command %q\n", os.Args[1])
		}
		usage()
	}
	if err := cmd(os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  load stdio     [flags] -- CMD [ARG...]
  load http      [flags] -- CMD [ARG...]   (or -url URL for a running server)
  load coldstart [flags] -- CMD [ARG...]
  load runaway   [flags] -- CMD [ARG...]
  load summary   FILE...
  load copies    -n N -o DIR SRC.wasm
`)
	os.Exit(2)
}

// common are the flags every measuring command takes.
type common struct {
	name    string
	mode    string
	jsonOut string
	verbose bool
}

func (c *common) register(fs *flag.FlagSet, defMode string) {
	fs.StringVar(&c.name, "name", "", "configuration name in the results")
	fs.StringVar(&c.mode, "mode", defMode, "protocol era: legacy (initialize 2025-11-25) or modern (stateless 2026-07-28 with per-request _meta)")
	fs.StringVar(&c.jsonOut, "json", "", "append one JSON result line to this file")
	fs.BoolVar(&c.verbose, "v", false, "copy the server's stderr to stderr")
}

// emit prints the human line and appends the JSON line.
func (c *common) emit(human string, v any) error {
	fmt.Println(human)
	if c.jsonOut == "" {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(c.jsonOut, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// throughput are the flags of the throughput commands (stdio, http)
// besides the common ones.
type throughput struct {
	tool    string
	warm, d time.Duration
	round   int
}

func (t *throughput) register(fs *flag.FlagSet) {
	fs.StringVar(&t.tool, "tool", "echo", "tool to call with {\"text\": ...}")
	fs.DurationVar(&t.warm, "warmup", time.Second, "unmeasured warm-up")
	fs.DurationVar(&t.d, "d", 5*time.Second, "measured duration")
	fs.IntVar(&t.round, "round", 0, "round number recorded in the results")
}

// report records res as a throughput run over transport in mode, emits
// it, and fails a run that saw invalid responses.
func (t *throughput) report(c *common, res *loadgen.Result, transport string, mode loadgen.Mode) error {
	res.Kind, res.Name, res.Transport, res.Mode, res.Round = "throughput", nameOr(c.name, transport), transport, mode, t.round
	if err := c.emit(res.String(), res); err != nil {
		return err
	}
	return errorsOf(res)
}

func parse(fs *flag.FlagSet, args []string) []string {
	fs.Parse(args)
	return fs.Args()
}

// parse parses a measuring command's arguments: it returns the command
// line after the flags and the protocol era -mode names.
func (c *common) parse(fs *flag.FlagSet, args []string) ([]string, loadgen.Mode, error) {
	cmdline := parse(fs, args)
	mode, err := loadgen.ParseMode(c.mode)
	return cmdline, mode, err
}

func cmdStdio(args []string) error {
	fs := flag.NewFlagSet("stdio", flag.ExitOnError)
	var c common
	c.register(fs, "legacy")
	var t throughput
	t.register(fs)
	n := fs.Int("n", 8, "requests in flight")
	count := fs.Int("count", 0, "stop after this many measured calls (0: by -d)")
	cmdline, mode, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	p, err := loadgen.StartProc(cmdline, c.verbose)
	if err != nil {
		return err
	}
	defer p.Stop()
	watchdog := time.AfterFunc(t.warm+t.d+time.Minute, p.Kill)
	defer watchdog.Stop()
	cl := loadgen.NewStdioClient(p.Stdout, p.Stdin, mode, t.tool)
	if err := cl.Handshake(); err != nil {
		return fmt.Errorf("%w%s", err, p.StderrTail())
	}
	res, err := cl.Run(loadgen.RunOptions{InFlight: *n, Warmup: t.warm, Duration: t.d, Count: *count, ServerCPU: p.CPU})
	if err != nil {
		return fmt.Errorf("%w%s", err, p.StderrTail())
	}
	return t.report(&c, res, "stdio", mode)
}

func cmdHTTP(args []string) error {
	fs := flag.NewFlagSet("http", flag.ExitOnError)
	var c common
	c.register(fs, "modern")
	url := fs.String("url", "", "endpoint of a running server (instead of starting CMD)")
	var t throughput
	t.register(fs)
	clients := fs.Int("c", 64, "concurrent keep-alive clients")
	cmdline, mode, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if mode != loadgen.Modern {
		return errors.New("http: only -mode modern (stateless 2026-07-28) is implemented")
	}
	o := loadgen.HTTPOptions{URL: *url, Tool: t.tool, Clients: *clients, Warmup: t.warm, Duration: t.d}
	if *url == "" {
		p, err := loadgen.StartProc(cmdline, c.verbose)
		if err != nil {
			return err
		}
		defer p.Stop()
		if o.URL, err = p.WaitURL(30 * time.Second); err != nil {
			return err
		}
		o.ServerCPU = p.CPU
	}
	res, err := loadgen.RunHTTP(o)
	if err != nil {
		return err
	}
	return t.report(&c, res, "http", loadgen.Modern)
}

func cmdColdStart(args []string) error {
	fs := flag.NewFlagSet("coldstart", flag.ExitOnError)
	var c common
	c.register(fs, "legacy")
	runs := fs.Int("runs", 11, "measured runs (after one unmeasured run that warms the compilation cache)")
	expect := fs.Int("expect-tools", 0, "fail unless tools/list lists this many tools")
	cmdline, mode, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	res, err := loadgen.ColdStart(loadgen.ColdStartOptions{Args: cmdline, Mode: mode, Runs: *runs, ExpectTools: *expect, Verbose: c.verbose})
	if err != nil {
		return err
	}
	res.Name = nameOr(c.name, "coldstart")
	return c.emit(fmt.Sprintf("%-24s first tools/list after median %.1f ms (min %.1f, max %.1f; %d runs, %d tools)",
		res.Name, res.MedianMs, res.MinMs, res.MaxMs, res.Runs, res.Tools), res)
}

func cmdRunaway(args []string) error {
	fs := flag.NewFlagSet("runaway", flag.ExitOnError)
	var c common
	c.register(fs, "legacy")
	echo := fs.String("echo", "echo", "tool of another plugin to call throughout")
	spin := fs.String("spin", "spin", "tool that never returns")
	deadline := fs.Duration("deadline", time.Second, "the spin plugin's configured timeout")
	runaways := fs.Int("runaways", 1, "runaway calls kept running at once")
	baseline := fs.Duration("baseline", 2*time.Second, "echo-only phase")
	d := fs.Duration("d", 4*time.Second, "echo phase while runaways run")
	interval := fs.Duration("interval", time.Millisecond, "pause between echo calls")
	cmdline, mode, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	res, err := loadgen.Runaway(loadgen.RunawayOptions{Args: cmdline, Mode: mode, EchoTool: *echo, SpinTool: *spin,
		Deadline: *deadline, Runaways: *runaways, Baseline: *baseline, Duration: *d, Interval: *interval, Verbose: c.verbose})
	if err != nil {
		return err
	}
	res.Name = nameOr(c.name, "runaway")
	human := fmt.Sprintf("%-24s %d/%d runaway calls stopped with -32001, overshoot p50 %.1f ms max %.1f ms; echo p50/p99 %.0f/%.0f µs alone, %.0f/%.0f µs during (%.1fx/%.1fx)",
		res.Name, res.TimedOut, res.Spins, res.OvershootP50Ms, res.OvershootMaxMs,
		res.EchoBaseline.P50us, res.EchoBaseline.P99us, res.EchoDuring.P50us, res.EchoDuring.P99us,
		res.EchoDuring.P50us/res.EchoBaseline.P50us, res.EchoDuring.P99us/res.EchoBaseline.P99us)
	if res.FirstBad != "" {
		human += "\n  first unexpected answer: " + res.FirstBad
	}
	return c.emit(human, res)
}

func cmdSummary(args []string) error {
	if len(args) == 0 {
		return errors.New("summary: give result files")
	}
	for _, name := range args {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		err = loadgen.Summarize(f, os.Stdout, loadgen.DefaultRatios)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func nameOr(name, def string) string {
	if name == "" {
		return def
	}
	return name
}

// errorsOf fails a run that saw invalid responses.
func errorsOf(r *loadgen.Result) error {
	if r.Errors > 0 {
		return fmt.Errorf("%d invalid responses (first: %s)", r.Errors, r.FirstError)
	}
	return nil
}

// cmdCopies writes N copies of a plugin, each made distinct by a custom
// section naming it, so that each has its own compilation-cache entry and
// a cold start loads N different modules, not one module N times.
func cmdCopies(args []string) error {
	fs := flag.NewFlagSet("copies", flag.ExitOnError)
	n := fs.Int("n", 20, "number of copies")
	dir := fs.String("o", "", "output directory (copies are named pNN.wasm)")
	rest := parse(fs, args)
	if len(rest) != 1 || *dir == "" {
		return errors.New("copies: want -o DIR and one source .wasm")
	}
	src, err := os.ReadFile(rest[0])
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	for i := 1; i <= *n; i++ {
		name := fmt.Sprintf("p%02d", i)
		out := append(slices.Clone(src), customSection("wasmcp-bench-copy", []byte(name))...)
		if err := os.WriteFile(filepath.Join(*dir, name+".wasm"), out, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// customSection encodes a Wasm custom section (id 0) with the given name
// and payload.
func customSection(name string, payload []byte) []byte {
	body := binary.AppendUvarint(nil, uint64(len(name)))
	body = append(body, name...)
	body = append(body, payload...)
	out := []byte{0}
	out = binary.AppendUvarint(out, uint64(len(body)))
	return append(out, body...)
}
