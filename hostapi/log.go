package hostapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// Bounds on what one call may log and notify, so that a plugin that floods
// costs the client and the server log a bounded amount whatever it does.
// Past a bound the call goes on; the excess is dropped.
const (
	// maxNotifications bounds the log and progress notifications one call
	// may send to the client.
	maxNotifications = 1000
	// maxNotificationBytes bounds their total size (log data, progress
	// messages).
	maxNotificationBytes = 1 << 20
	// maxLogMessage bounds one fast log line or progress message sent to
	// the client; longer ones are cut and say how long they were.
	maxLogMessage = 16 << 10
	// maxLogData bounds the data of one structured log notification;
	// larger data (which cannot be cut and stay JSON) is replaced by a
	// string saying how large it was.
	maxLogData = 64 << 10
	// maxServerLogLines bounds the plugin log lines one call writes to the
	// server log, and maxServerLogText the text of each.
	maxServerLogLines = 1000
	maxServerLogText  = 1 << 10
	// maxLoggerName bounds the logger name of a structured log.
	maxLoggerName = 256
	// maxLogParams bounds the params of the log method and
	// maxProgressParams those of progress: larger ones are refused with
	// abi.ErrTooBig without being decoded, so that a flood of huge
	// messages costs the host nothing.
	maxLogParams      = 2 * maxLogData
	maxProgressParams = 4 * maxLogMessage
)

// MaxLogLines and MaxLogLineText are the bounds on a plugin's server log
// for one call (maxServerLogLines, maxServerLogText), for the hosts of
// other plugin kinds that write to it: package wasip2 cuts a component's
// stdout and stderr to them.
const (
	MaxLogLines    = maxServerLogLines
	MaxLogLineText = maxServerLogText
)

// Log handles the fast log import: msg becomes a JSON string, sent to the
// client as notifications/message (level clamped to the MCP levels) and to
// the server log, each within the bounds above.
func (b *bound) Log(ctx context.Context, level int32, msg []byte) {
	name := abi.LevelName(level)
	if b.serverLine(ctx) {
		b.h.log.Log(ctx, slogLevel(name), "plugin log", "level", name, "message", clip(msg, maxServerLogText))
	}
	if b.c == nil {
		return
	}
	text := clip(msg, maxLogMessage)
	if !b.note(len(text) + 2) {
		return
	}
	data, _ := json.Marshal(text)
	b.c.Log(name, "", data)
}

// logCall handles the log method: {level, logger?, data} -> {}.
func (b *bound) logCall(ctx context.Context, params []byte) ([]byte, int32) {
	if len(params) > maxLogParams {
		return nil, abi.ErrTooBig
	}
	if b.notes >= maxNotifications && b.logLines > maxServerLogLines {
		return empty, 0 // both bounds reached: do not even decode
	}
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
	logger := clip([]byte(p.Logger), maxLoggerName)
	if b.serverLine(ctx) {
		b.h.log.Log(ctx, slogLevel(p.Level), "plugin log", "level", p.Level, "logger", logger, "data", clip(p.Data, maxServerLogText))
	}
	if b.c == nil {
		return empty, 0
	}
	data := p.Data
	if len(data) > maxLogData {
		data, _ = json.Marshal(fmt.Sprintf("[%d bytes of log data dropped: over the %d byte limit]", len(p.Data), maxLogData))
	}
	if b.note(len(data) + len(logger)) {
		b.c.Log(p.Level, logger, append(json.RawMessage(nil), data...))
	}
	return empty, 0
}

// note counts one client notification of about size bytes and reports
// whether it may be sent.
func (b *bound) note(size int) bool {
	b.notes++
	if b.notes > maxNotifications || b.noteBytes+size > maxNotificationBytes {
		return false
	}
	b.noteBytes += size
	return true
}

// serverLine counts one plugin log line for the server log and reports
// whether it may be written; the first line over the bound is replaced by
// one saying that the rest are dropped.
func (b *bound) serverLine(ctx context.Context) bool {
	b.logLines++
	if b.logLines == maxServerLogLines+1 {
		b.h.log.Log(ctx, slog.LevelWarn, "plugin log lines over the per-call limit are dropped", "limit", maxServerLogLines)
	}
	return b.logLines <= maxServerLogLines
}

// clip returns b as a string of at most about max bytes: longer text is
// cut at a rune boundary and ends with its original length.
func clip(b []byte, max int) string {
	if len(b) <= max {
		return string(b)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… [%d bytes]", b[:cut], len(b))
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
