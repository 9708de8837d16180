package mcp

import (
	"strconv"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/tasks"
)

// The wire shapes of tasks: the Task object of both eras and the
// 2026-07-28 DetailedTask.

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	return append(b, '"')
}

// appendTaskFields appends the members of the Task object (without
// braces): 2026-07-28 names (ttlMs, pollIntervalMs) when modern, else
// those of 2025-11-25 (ttl, pollInterval).
func appendTaskFields(b []byte, t *tasks.Task, modern bool) []byte {
	b = append(b, `"taskId":`...)
	b = jsonscan.AppendString(b, t.ID)
	b = append(b, `,"status":`...)
	b = jsonscan.AppendString(b, string(t.Status))
	if t.StatusMessage != "" {
		b = append(b, `,"statusMessage":`...)
		b = jsonscan.AppendString(b, t.StatusMessage)
	}
	b = append(b, `,"createdAt":`...)
	b = appendTime(b, t.CreatedAt)
	b = append(b, `,"lastUpdatedAt":`...)
	b = appendTime(b, t.UpdatedAt)
	ttl, poll := `,"ttl":`, `,"pollInterval":`
	if modern {
		ttl, poll = `,"ttlMs":`, `,"pollIntervalMs":`
	}
	b = append(b, ttl...)
	b = strconv.AppendInt(b, t.TTL.Milliseconds(), 10)
	if t.PollInterval > 0 {
		b = append(b, poll...)
		b = strconv.AppendInt(b, t.PollInterval.Milliseconds(), 10)
	}
	return b
}

// appendTaskObject appends the Task object {...}.
func appendTaskObject(b []byte, t *tasks.Task, modern bool) []byte {
	b = append(b, '{')
	b = appendTaskFields(b, t, modern)
	return append(b, '}')
}

// appendDetailedTask appends the 2026-07-28 DetailedTask members of t
// after its Task members: inputRequests, result or error by status.
func appendDetailedTask(b []byte, t *tasks.Task) []byte {
	b = appendTaskFields(b, t, true)
	switch {
	case t.Status == tasks.InputRequired && len(t.InputRequests) > 0:
		b = append(b, `,"inputRequests":`...)
		b = append(b, t.InputRequests...)
	case t.Status == tasks.Completed && len(t.Result) > 0:
		b = append(b, `,"result":`...)
		b = append(b, t.Result...)
	case t.Status == tasks.Failed && len(t.Error) > 0:
		b = append(b, `,"error":`...)
		b = append(b, t.Error...)
	}
	return b
}
