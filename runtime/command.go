package runtime

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// command runs one call in a fresh instance of a command module (ABI §7):
// the envelope is on stdin and behind input_*, the response is stdout plus
// output_write, and the exit code gives the status.
func (p *Pool) command(ctx context.Context, cctx *deadlineCtx, start time.Time, input []byte, h Host) (uint32, []byte, error) {
	st := &callState{}
	st.begin(input, h, p.lim.MaxOutput)
	stderr := &stdioSink{out: p.out, head: true}
	mc := p.mc.WithStdin(bytes.NewReader(input)).
		WithStdout(stdoutOutput{st}).
		WithStderr(stderr)
	mem := &limitedMemory{limit: p.lim.Memory, declMax: p.m.maxMem, mmap: p.m.interruptible(), acct: &p.memBytes}
	mod, _, err := p.instantiate(cctx, st, mem, mc)
	p.created.Add(1)
	settle(cctx, time.Time{})
	if err == nil && cctx.Err() != nil {
		err = cctx.Err()
	}
	var status uint32 = abi.StatusOK
	var ee *sys.ExitError
	if errors.As(err, &ee) && cctx.Err() == nil && !errors.Is(err, errOutputTooLarge) {
		switch ee.ExitCode() {
		case 0:
			err = nil
		case 1:
			status, err = abi.StatusError, nil
		}
	}
	var cerr error
	if err != nil {
		cerr = p.classify(ctx, cctx, start, cctx.timeout, err, mem.refused, string(stderr.keep))
	}
	if mod != nil {
		p.closeModule(mod)
	}
	st.end()
	if cerr != nil {
		p.discarded.Add(1)
		return 0, nil, cerr
	}
	return status, st.out, nil
}
