package hostapi

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// Log handles the fast log import: msg becomes a JSON string, sent to the
// client as notifications/message (level clamped to the MCP levels) and to
// the server log.
func (b *bound) Log(ctx context.Context, level int32, msg []byte) {
	name := abi.LevelName(level)
	b.h.log.Log(ctx, slogLevel(name), "plugin log", "level", name, "message", string(msg))
	if b.c == nil || !b.note() {
		return
	}
	data, _ := json.Marshal(string(msg))
	b.c.Log(name, "", data)
}

// logCall handles the log method: {level, logger?, data} -> {}.
func (b *bound) logCall(ctx context.Context, params []byte) ([]byte, int32) {
	var p struct {
		Level  string          `json:"level"`
		Logger string          `json:"logger"`
		Data   json.RawMessage `json:"data"`
	}
	if !decode(params, &p) || len(p.Data) == 0 {
		return nil, abi.ErrBadParams
	}
	if _, ok := abi.LevelValue(p.Level); !ok {
		return nil, abi.ErrBadParams
	}
	b.h.log.Log(ctx, slogLevel(p.Level), "plugin log", "level", p.Level, "logger", p.Logger, "data", string(p.Data))
	if b.c != nil && b.note() {
		b.c.Log(p.Level, p.Logger, append(json.RawMessage(nil), p.Data...))
	}
	return empty, 0
}

// note counts one client notification and reports whether it may be sent.
func (b *bound) note() bool {
	b.notes++
	return b.notes <= maxNotifications
}

func slogLevel(name string) slog.Level {
	switch name {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	}
	return slog.LevelError
}
