// Command gocommand is a Go command-mode test plugin: it reads the envelope
// from stdin and answers on stdout. Built by ../build.sh:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -ldflags=-s -o gocommand.wasm .
//
// Method "exit" exits with the code in params, "spin" never returns,
// anything else is echoed as {"echo": params}.
package main

import (
	"encoding/json"
	"io"
	"os"
)

func main() {
	in, _ := io.ReadAll(os.Stdin)
	var env struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(in, &env); err != nil {
		os.Stdout.WriteString(`{"code":-32700,"message":"bad envelope"}`)
		os.Exit(1)
	}
	switch env.Method {
	case "exit":
		var code int
		_ = json.Unmarshal(env.Params, &code)
		os.Stdout.WriteString(`{"code":-32000,"message":"exiting"}`)
		os.Exit(code)
	case "spin":
		for {
		}
	}
	b, _ := json.Marshal(map[string]json.RawMessage{"echo": env.Params})
	os.Stdout.Write(b)
}
