// Command goplugin is a Go reactor test plugin written against the raw
// wasmcp imports (no SDK). Built by ../build.sh:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags=-s -o goplugin.wasm .
//
// The envelope's method picks the behaviour (see wasmcpCall); an input
// starting with 'R' is answered with its size, without any JSON.
package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

//go:wasmimport wasmcp input_len
func inputLen() uint32

//go:wasmimport wasmcp input_read
func inputRead(p unsafe.Pointer, n uint32) uint32

//go:wasmimport wasmcp output_write
func outputWrite(p unsafe.Pointer, n uint32)

//go:wasmimport wasmcp log
func logLine(level uint32, p unsafe.Pointer, n uint32)

//go:wasmimport wasmcp call
func hostCall(mp unsafe.Pointer, ml uint32, pp unsafe.Pointer, pl uint32) int32

//go:wasmimport wasmcp result_read
func resultRead(p unsafe.Pointer, n uint32) uint32

type envelope struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

func write(b []byte) { outputWrite(ptr(b), uint32(len(b))) }

func writeJSON(v any) {
	b, _ := json.Marshal(v)
	write(b)
}

// call makes a host call and returns the errno (or size) and the result.
func call(method string, params []byte) (int32, json.RawMessage) {
	m := []byte(method)
	r := hostCall(ptr(m), uint32(len(m)), ptr(params), uint32(len(params)))
	n := r
	if r == -5 {
		n = 4096
	}
	if n <= 0 {
		return r, nil
	}
	buf := make([]byte, n)
	got := resultRead(ptr(buf), uint32(n))
	return r, buf[:got]
}

var keep [][]byte

//go:wasmexport wasmcp_call
func wasmcpCall() uint32 {
	defer runtime.Gosched() // let the Go runtime's background work run (GC sweeping)
	in := make([]byte, inputLen())
	inputRead(ptr(in), uint32(len(in)))
	if len(in) > 0 && in[0] == 'R' { // raw: answer the input's size, no JSON
		write([]byte(strconv.Itoa(len(in))))
		return 0
	}
	var env envelope
	if err := json.Unmarshal(in, &env); err != nil {
		write([]byte(`{"code":-32700,"message":"bad envelope"}`))
		return 1
	}
	switch env.Method {
	case "echo":
		write(env.Params)
	case "size": // echo only the size of the params, for big-request tests
		writeJSON(len(env.Params))
	case "panic":
		panic("boom")
	case "oom":
		for {
			keep = append(keep, make([]byte, 1<<20))
		}
	case "sleep":
		time.Sleep(time.Hour)
	case "sha256": // params: n; fill n bytes and hash them (a CPU-bound call)
		var n int
		_ = json.Unmarshal(env.Params, &n)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * 31)
		}
		sum := sha256.Sum256(b)
		writeJSON(hex.EncodeToString(sum[:]))
	case "spin":
		for {
		}
	case "exit":
		os.Exit(3)
	case "flood":
		b := make([]byte, 64<<10)
		for {
			write(b)
		}
	case "stderr":
		os.Stderr.WriteString(strings.Repeat("x", 200<<10))
		os.Stdout.WriteString("to stdout\n")
		write([]byte(`{}`))
	case "log":
		msg := []byte("hello from go")
		logLine(1, ptr(msg), uint32(len(msg)))
		write([]byte(`{}`))
	case "host": // {"method": "...", "params": {...}}
		var p struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(env.Params, &p)
		r, res := call(p.Method, p.Params)
		writeJSON(map[string]any{"errno": r, "result": string(res)})
	case "sandbox":
		writeJSON(sandbox())
	case "readfile": // "path"
		var path string
		_ = json.Unmarshal(env.Params, &path)
		b, err := os.ReadFile(path)
		werr := os.WriteFile(path+".new", []byte("x"), 0o644)
		writeJSON(map[string]any{"data": string(b), "readErr": errString(err), "writeErr": errString(werr)})
	case "time":
		var r [16]byte
		_, _ = rand.Read(r[:])
		t0 := time.Now()
		time.Sleep(20 * time.Millisecond)
		writeJSON(map[string]any{"unix": t0.Unix(), "slept_ms": time.Since(t0).Milliseconds(), "rand": hex.EncodeToString(r[:])})
	default:
		write([]byte(`{"code":-32601,"message":"unknown method"}`))
		return 1
	}
	return 0
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// listing reports a directory read: its error, or how many entries it had.
func listing(ents []os.DirEntry, err error) string {
	if err != nil {
		return err.Error()
	}
	return strconv.Itoa(len(ents)) + " entries"
}

// sandbox reports what the plugin can reach without grants.
func sandbox() map[string]any {
	_, fsErr := os.ReadFile("/etc/passwd")
	root, dirErr := os.ReadDir("/")
	cwd, cwdErr := os.ReadDir(".")
	httpErrno, _ := call("http/fetch", []byte(`{"method":"GET","url":"https://example.com/"}`))
	kvErrno, _ := call("kv/get", []byte(`{"key":"k"}`))
	cfgErrno, _ := call("config/get", []byte(`{"key":"api_key"}`))
	return map[string]any{
		"fs":     errString(fsErr),
		"root":   listing(root, dirErr),
		"cwd":    listing(cwd, cwdErr),
		"env":    os.Environ(),
		"args":   os.Args,
		"http":   httpErrno,
		"kv":     kvErrno,
		"config": cfgErrno,
	}
}

func main() {}
