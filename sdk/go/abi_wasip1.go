//go:build wasip1

package wasmcp

import (
	"runtime"
	"unsafe"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// The wasmcp host functions (ABI §2). Every (ptr, len) is a range of this
// module's memory that the host copies during the call.

//go:wasmimport wasmcp input_len
func inputLen() uint32

//go:wasmimport wasmcp input_read
func inputRead(ptr unsafe.Pointer, n uint32) uint32

//go:wasmimport wasmcp output_write
func outputWrite(ptr unsafe.Pointer, n uint32)

//go:wasmimport wasmcp log
func logImport(level int32, ptr unsafe.Pointer, n uint32)

//go:wasmimport wasmcp call
func callImport(mptr unsafe.Pointer, mlen uint32, pptr unsafe.Pointer, plen uint32) int32

//go:wasmimport wasmcp result_read
func resultRead(ptr unsafe.Pointer, n uint32) uint32

// wasmcpCall is the plugin's entry point: read the envelope, dispatch it,
// write the response, return the status.
//
//go:wasmexport wasmcp_call
func wasmcpCall() uint32 {
	// Let the runtime's background goroutines (the sweeper among them) run
	// before the export returns; without it a long-lived instance's memory
	// grows until it runs out (WAZERO-NOTES §8, pitfall 3).
	defer runtime.Gosched()
	n := inputLen()
	in := make([]byte, n)
	for read := uint32(0); read < n; {
		m := inputRead(unsafe.Pointer(&in[read]), n-read)
		if m == 0 {
			in = in[:read]
			break
		}
		read += m
	}
	status, out := Handle(in)
	if len(out) > 0 {
		outputWrite(unsafe.Pointer(&out[0]), uint32(len(out)))
	}
	if len(in)+len(out) > largeCall {
		// A large request leaves megabytes of garbage that Gosched alone
		// does not reclaim fast enough: repeated 900 KB requests ran a
		// 32 MiB instance out of memory after 9 calls without this, and
		// stayed flat with it. A collection costs far less than decoding
		// such a request.
		in, out = nil, nil
		runtime.GC()
	}
	return status
}

func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// largeCall is the request plus response size above which wasmcpCall
// collects garbage before returning.
const largeCall = 256 << 10

// wasmHost is the real host, through the imports.
type wasmHost struct{}

func defaultHost() Host { return wasmHost{} }

// maxErrorResult bounds the error JSON read after abi.ErrFailed, whose
// size the host does not announce.
const maxErrorResult = 1 << 20

func (wasmHost) Call(method string, params []byte) ([]byte, int32) {
	m := []byte(method)
	r := callImport(ptr(m), uint32(len(m)), ptr(params), uint32(len(params)))
	switch {
	case r > 0:
		buf := make([]byte, r)
		got := uint32(0)
		for got < uint32(r) {
			k := resultRead(unsafe.Pointer(&buf[got]), uint32(r)-got)
			if k == 0 {
				break
			}
			got += k
		}
		return buf[:got], 0
	case r == 0:
		return nil, 0
	case r == abi.ErrFailed:
		var out []byte
		chunk := make([]byte, 4096)
		for len(out) < maxErrorResult {
			k := resultRead(unsafe.Pointer(&chunk[0]), uint32(len(chunk)))
			if k == 0 {
				break
			}
			out = append(out, chunk[:k]...)
		}
		return out, r
	}
	return nil, r
}

func (wasmHost) Log(level int32, msg []byte) {
	logImport(level, ptr(msg), uint32(len(msg)))
}
