// Command wasmcp is an MCP server whose tools, resources and prompts are
// WebAssembly plugins. See README.md for usage.
//
//	wasmcp serve   [--config FILE] [--plugins DIR]... [--http ADDR] [--metrics ADDR]
//	wasmcp call    [--config FILE] [--plugins DIR]... TOOL [JSON]
//	wasmcp inspect [--config FILE] [--json] PLUGIN.wasm
//	wasmcp plugins [--config FILE] [--plugins DIR]... [--json]
//	wasmcp new     --lang go|c|rust|assemblyscript [--with-app] NAME
//	wasmcp pull    [--config FILE] [--key cosign.pub] REF
//	wasmcp push    [--config FILE] FILE.wasm oci://HOST/REPO:TAG
//	wasmcp lock    [--config FILE] [--update]
//	wasmcp authz check [--config FILE] --principal P [--claims JSON] --action A --resource R [--args JSON]
//	wasmcp version
//
// Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.
// Diagnostics go to stderr only.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// usageError is a mistake on the command line or in the configuration:
// exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

const usage = `usage:
  wasmcp serve   [--config FILE] [--plugins DIR]... [--http ADDR]   serve MCP on stdio, or on HTTP at ADDR
                 [--metrics ADDR]                                  and /metrics, /healthz, /readyz at ADDR
  wasmcp call    [--config FILE] [--plugins DIR]... TOOL [JSON]     call one tool, print the result
  wasmcp inspect [--config FILE] [--json] PLUGIN.wasm               show a plugin's manifest and capabilities
  wasmcp plugins [--config FILE] [--plugins DIR]... [--json]        list the plugins loaded: source, ABI, digest, tools, grants, limits
  wasmcp new     --lang go|c|rust|assemblyscript [--with-app] NAME  scaffold a plugin project (--with-app: an MCP App, Go)
  wasmcp pull    [--config FILE] [--key cosign.pub] REF             fetch and verify a plugin into the cache, print its digest
  wasmcp push    [--config FILE] FILE.wasm oci://HOST/REPO:TAG      push a plugin (CNCF Wasm OCI layout)
  wasmcp lock    [--config FILE] [--update]                         write wasmcp.lock: url plugins' digests and grants, every plugin's definitions
  wasmcp authz check [--config FILE] --principal 'Client::"alice"' [--claims JSON]
                 --action call_tool --resource 'Tool::"name"' [--args JSON] [--listing]
                                                                    what the [authz] policies decide: allow (exit 0) or deny (exit 1)
  wasmcp version                                                    print the version
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal starts a graceful shutdown; a second one kills the
	// process at once (the default handling is back).
	context.AfterFunc(ctx, stop)
	err := run(ctx, os.Args[1:])
	stop()
	if code := exitCode(err); code != 0 {
		os.Exit(code)
	}
	if err != nil && !errors.Is(err, errHelp) {
		fmt.Fprintln(os.Stderr, "wasmcp:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// commands are the subcommands run takes, by name.
var commands = map[string]func(ctx context.Context, args []string) error{
	"serve":   cmdServe,
	"call":    cmdCall,
	"inspect": cmdInspect,
	"plugins": cmdPlugins,
	"new":     func(_ context.Context, args []string) error { return cmdNew(args) },
	"pull":    cmdPull,
	"push":    cmdPush,
	"lock":    cmdLock,
	"authz":   cmdAuthz,
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return usagef("no command given")
	}
	if cmd, ok := commands[args[0]]; ok {
		return cmd(ctx, args[1:])
	}
	switch args[0] {
	case "version", "--version", "-v":
		fmt.Println("wasmcp", version())
		return nil
	case "help", "--help", "-h":
		fmt.Print(usage)
		return nil
	}
	fmt.Fprint(os.Stderr, usage)
	return usagef("unknown command %q", args[0])
}
