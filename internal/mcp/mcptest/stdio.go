package mcptest

import (
	"context"
	"io"

	"github.com/wasmcp/wasmcp/internal/mcp"
)

// ServeStdio runs s.ServeStdio(ctx) on in-memory pipes in a goroutine, as a
// client process would see the server: the client writes its lines to w
// (closing w is end of input) and reads the server's from r, which ends
// once ServeStdio has returned. done receives ServeStdio's result.
func ServeStdio(ctx context.Context, s *mcp.Server) (w *io.PipeWriter, r *io.PipeReader, done <-chan error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ch := make(chan error, 1)
	go func() {
		ch <- s.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	return inW, outR, ch
}
