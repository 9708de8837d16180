// Command everything-server serves the conformance fixture
// (mcptest.Everything) with wasmcp's protocol engine over Streamable HTTP,
// for the official MCP conformance suite:
//
//	go run ./cmd/everything-server -addr 127.0.0.1:3001
//	npx @modelcontextprotocol/conformance server --url http://localhost:3001/mcp ...
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3001", "listen address")
	verbose := flag.Bool("v", false, "log engine diagnostics to stderr")
	flag.Parse()
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	p := mcptest.NewEverything()
	s := mcp.NewServer(p, &mcp.Options{Name: "wasmcp-everything", Version: "test", Logger: logger})
	p.SetServer(s)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "serving http://%s/mcp\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := s.RunHTTP(ctx, ln, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
