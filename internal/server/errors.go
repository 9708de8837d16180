package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/plugins"
	"github.com/wasmcp/wasmcp/runtime"
)

// This file is the one place where failures become what a client sees
// (DESIGN.md, "Error mapping"):
//
//	unknown tool or prompt, malformed params         -32602
//	tool arguments fail inputSchema                  tool result isError, naming the fields
//	structuredContent fails outputSchema             tool result isError (and a log line)
//	plugin returned status 1                         that JSON-RPC error, passed through
//	plugin trapped, exited, ran out of memory,       tools: isError with a short message;
//	  wrote too much, returned garbage                 other methods: -32603
//	call passed its deadline                         -32001, data {"timeoutMs": N}
//	pool and queue full                              -32001, data {"busy": true, "retryAfterMs": N}
//	server-wide call limit and queue full (engine)   -32001 the same; HTTP 503 + Retry-After before dispatch
//	tool, prompt or resource of a hidden plugin      exactly as an unknown one (-32602 / -32002)
//	client cancelled                                 no response (the engine drops it)
//	resource not found                               -32002 (the engine sends -32602 on 2026-07-28)
//	input request needs an undeclared capability     -32021 on 2026-07-28; legacy: tools isError, else -32602
//	input request not granted, or not MCP's          tools: isError naming it; other methods: -32603
//	requestState altered, foreign or expired         -32602

// toolError is a CallToolResult with isError set and one text block.
func toolError(msg string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Content []map[string]string `json:"content"`
		IsError bool                `json:"isError"`
	}{[]map[string]string{{"type": "text", "text": msg}}, true})
	return b
}

// mapError turns an error from the registry into the client's answer: a
// tool result (for failures a model can act on) or a *jsonrpc.Error.
func mapError(ctx context.Context, log *slog.Logger, r *mcp.Request, err error) (json.RawMessage, error) {
	isTool := r.Method == "tools/call"
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return nil, ctx.Err() // the client cancelled: no response
	}
	var (
		rtErr    *runtime.Error
		argErr   *plugins.ArgumentsError
		outErr   *plugins.OutputError
		plErr    *plugins.PluginError
		parErr   *plugins.ParamsError
		nfErr    *plugins.NotFoundError
		capErr   *plugins.MissingCapabilityError
		badErr   *plugins.BadResultError
		loadErr  *plugins.LoadError
		cliErr   *plugins.ClientRequestError
		inErr    *plugins.InputRequestError
		rpcError *jsonrpc.Error
	)
	var den *denial
	switch {
	case errors.As(err, &den):
		return nil, den // the policies refused the item routed (the audit trail reads why)
	case errors.As(err, &cliErr):
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if isTool {
			return toolError(cliErr.Error()), nil
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, cliErr.Error(), nil)
	case errors.As(err, &rpcError):
		return nil, rpcError
	case errors.As(err, &inErr):
		log.Warn("plugin asked the client for what it may not", "method", r.Method, "error", inErr)
		if isTool {
			return toolError(inErr.Error()), nil
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, inErr.Error(), nil)
	case errors.Is(err, plugins.ErrUnknownTool):
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Unknown tool: "+strings.TrimPrefix(err.Error(), plugins.ErrUnknownTool.Error()+": "), nil)
	case errors.Is(err, plugins.ErrUnknownPrompt):
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Unknown prompt: "+strings.TrimPrefix(err.Error(), plugins.ErrUnknownPrompt.Error()+": "), nil)
	case errors.Is(err, plugins.ErrBadState):
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid requestState: altered, issued for another request, or expired", nil)
	case errors.As(err, &parErr):
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, parErr.Msg, nil)
	case errors.As(err, &nfErr):
		return nil, jsonrpc.NewError(jsonrpc.CodeResourceNotFound, "Resource not found: "+nfErr.URI, map[string]string{"uri": nfErr.URI})
	case errors.As(err, &argErr):
		return toolError(argErr.Error()), nil
	case errors.As(err, &outErr):
		log.Warn("structured result fails the tool's outputSchema", "tool", outErr.Tool, "error", outErr.Err)
		return toolError(outErr.Error()), nil
	case errors.As(err, &plErr):
		return nil, &jsonrpc.Error{Code: plErr.Code, Message: plErr.Message, Data: plErr.Data}
	case errors.As(err, &capErr):
		if r.Stateless {
			return nil, jsonrpc.NewError(jsonrpc.CodeMissingClientCapability, capErr.Error(), map[string]any{"requiredCapabilities": capErr.Required})
		}
		if isTool {
			return toolError(capErr.Error()), nil
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, capErr.Error(), nil)
	case errors.As(err, &rtErr):
		switch rtErr.Kind {
		case runtime.KindDeadline:
			return nil, jsonrpc.NewError(jsonrpc.CodeRequestTimeout, "Request timed out", map[string]int64{"timeoutMs": rtErr.Timeout.Milliseconds()})
		case runtime.KindCanceled:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		case runtime.KindBusy:
			return nil, jsonrpc.NewError(jsonrpc.CodeRequestTimeout, "Server busy: "+rtErr.Message, map[string]any{"busy": true, "retryAfterMs": 1000})
		}
		log.Warn("plugin call failed", "method", r.Method, "kind", rtErr.Kind.String(), "error", rtErr.Message, "detail", rtErr.Detail)
		if isTool {
			return toolError(rtErr.Message), nil
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, rtErr.Message, nil)
	case errors.As(err, &badErr):
		log.Warn("plugin returned an invalid result", "method", r.Method, "error", badErr.Msg)
		if isTool {
			return toolError(badErr.Error()), nil
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, badErr.Error(), nil)
	case errors.As(err, &loadErr):
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "plugin unavailable", nil)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	log.Error("request failed", "method", r.Method, "error", err)
	if isTool {
		return toolError(fmt.Sprintf("tool failed: %v", firstLine(err.Error()))), nil
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error", nil)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
