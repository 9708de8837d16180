package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/server"
)

// cmdCall runs one tool and prints its result on stdout. A JSON-RPC error
// or an isError result exits 1.
func cmdCall(ctx context.Context, args []string) error {
	var argsJSON json.RawMessage
	cfg, pos, err := newConfigCmd("call").load(args, func(pos []string) error {
		if len(pos) < 1 || len(pos) > 2 {
			return usagef("call: want TOOL [JSON]")
		}
		if len(pos) == 2 {
			argsJSON = json.RawMessage(pos[1])
			if !json.Valid(argsJSON) {
				return usagef("call: arguments are not valid JSON: %s", pos[1])
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	srv, err := server.New(ctx, cfg, server.Options{Version: version(), Logger: newLogger("warn", cfg.Server.LogFormat)})
	if err != nil {
		return usageError{err}
	}
	defer srv.Close(context.WithoutCancel(ctx))
	res, err := srv.CallTool(ctx, pos[0], argsJSON)
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			b, _ := json.Marshal(rpcErr)
			fmt.Fprintln(os.Stderr, string(b))
			return fmt.Errorf("call %s: %s", pos[0], rpcErr.Message)
		}
		return err
	}
	os.Stdout.Write(append(indent(res), '\n'))
	var r struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(res, &r) == nil && r.IsError {
		return fmt.Errorf("call %s: the tool reported an error", pos[0])
	}
	return nil
}

func indent(b []byte) []byte {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return b
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return b
	}
	return out
}
