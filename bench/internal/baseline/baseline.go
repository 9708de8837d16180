// Package baseline is the command line the benchmark's baseline servers
// (bench/cmd/bareecho and bench/cmd/nativeserver) share: they serve on
// stdio, or with -http ADDR at /mcp on ADDR, printing the bound URL on
// stderr as `wasmcp serve --http` does.
package baseline

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
)

// Main is the main function of the baseline server name: it parses the
// flags, then serves with serveStdio, or with -http ADDR serves handler
// (httpWhat says what it is, for the flag's usage) at /mcp on ADDR. It
// exits the process on an error.
func Main(name, httpWhat string, serveStdio func() error, handler http.Handler) {
	addr := flag.String("http", "", "serve "+httpWhat+" on this address (e.g. 127.0.0.1:0) instead of stdio")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix(name + ": ")
	if *addr == "" {
		if err := serveStdio(); err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	fmt.Fprintf(os.Stderr, "%s: serving MCP on http://%s/mcp\n", name, ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
