// Command gocrash is the Go plugin of the hostile corpus: the ways a Go
// guest dies or never returns, and what a Go guest can reach.
//
//	panic            panics in the handler (the SDK recovers: a tool error)
//	goroutine_panic  panics in a goroutine: nothing can recover, the Go runtime dies
//	deadlock         blocks forever on a channel: "all goroutines are asleep"
//	goroutines       starts 1,000 goroutines that spin or sleep, and waits for them forever
//	leak             starts 1,000 goroutines that block forever, and returns
//	hog              allocates 1 MiB blocks until the Go runtime runs out of memory
//	sandbox {path}   what Go's os and net packages reach: a host file, the
//	                 environment, a directory listing of /, a TCP dial
//
// Build: testdata/hostile/build.sh
package main

import (
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

var plugin = wasmcp.New(wasmcp.Info{Name: "gocrash", Version: "1.0.0"})

type none struct{}

type sandboxIn struct {
	Path string `json:"path"`
	Dial string `json:"dial"`
}

func init() {
	tool := func(name string, h func(c *wasmcp.Context, in none) (*wasmcp.Result, error)) {
		wasmcp.AddTool(plugin, wasmcp.Tool{Name: name, Description: name}, h)
	}
	tool("panic", func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
		panic("boom in the handler")
	})
	tool("goroutine_panic", func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
		go func() { panic("boom in a goroutine") }()
		time.Sleep(100 * time.Millisecond) // let it run
		return wasmcp.TextResult("survived"), nil
	})
	tool("deadlock", func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
		ch := make(chan int)
		<-ch
		return nil, nil
	})
	tool("goroutines", func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
		var wg sync.WaitGroup
		for i := range 1000 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					for n := 0; ; n++ {
						if n%1000 == 0 {
							time.Sleep(time.Millisecond)
						}
					}
				}
				time.Sleep(time.Hour)
			}()
		}
		wg.Wait()
		return wasmcp.TextResult("all done"), nil
	})
	tool("leak", func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
		block := make(chan struct{})
		for range 1000 {
			go func() { <-block }()
		}
		return wasmcp.TextResult("leaked 1000 goroutines"), nil
	})
	tool("hog", func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
		var keep [][]byte
		for {
			b := make([]byte, 1<<20)
			b[0], b[len(b)-1] = 1, 1
			keep = append(keep, b)
		}
	})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "sandbox", Description: "what os and net reach",
		InputSchema: wasmcp.Object(wasmcp.Required("path", wasmcp.String("a host file")), wasmcp.Required("dial", wasmcp.String("host:port")))},
		func(c *wasmcp.Context, in sandboxIn) (*wasmcp.Result, error) {
			var r []string
			if b, err := os.ReadFile(in.Path); err != nil {
				r = append(r, "file: error")
			} else {
				r = append(r, "file: read "+string(b))
			}
			r = append(r, fmt.Sprintf("env: %q", os.Environ()))
			if ents, err := os.ReadDir("/"); err != nil {
				r = append(r, "root: error")
			} else {
				r = append(r, fmt.Sprintf("root: %d entries", len(ents)))
			}
			if conn, err := net.Dial("tcp", in.Dial); err != nil {
				r = append(r, "dial: error")
			} else {
				conn.Close()
				r = append(r, "dial: connected")
			}
			return wasmcp.TextResult(strings.Join(r, "; ")), nil
		})
	wasmcp.Serve(plugin)
}

func main() {}
