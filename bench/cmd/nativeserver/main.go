// Command nativeserver is the baseline of wasmcp's benchmarks: an MCP server
// built with the official Go SDK (github.com/modelcontextprotocol/go-sdk)
// exposing the same trivial tool as the benchmark plugins, "echo", which
// returns its "text" argument as one text content block.
//
// By default it serves MCP on stdio. With -http ADDR it serves the SDK's
// stateless Streamable HTTP handler (JSON responses) at /mcp on ADDR and
// prints the bound URL on stderr, as `wasmcp serve --http` does.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/bench/internal/native"
)

func main() {
	addr := flag.String("http", "", "serve stateless Streamable HTTP on this address (e.g. 127.0.0.1:0) instead of stdio")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("nativeserver: ")
	s := native.NewServer()
	if *addr == "" {
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", native.HTTPHandler(s))
	fmt.Fprintf(os.Stderr, "nativeserver: serving MCP on http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
