// Command bareecho is the ceiling of wasmcp's benchmarks: it reads JSON-RPC
// lines on stdin, decodes each and writes a minimal tools/call-shaped
// response, with no MCP semantics. With -http ADDR it serves the same
// answer from a bare net/http JSON handler at /mcp and prints the bound URL
// on stderr.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/wasmcp/wasmcp/bench/internal/bare"
)

func main() {
	addr := flag.String("http", "", "serve a bare net/http JSON handler on this address (e.g. 127.0.0.1:0) instead of stdio")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("bareecho: ")
	if *addr == "" {
		if err := bare.ServeStdio(os.Stdin, os.Stdout); err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", bare.Handler())
	fmt.Fprintf(os.Stderr, "bareecho: serving on http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
