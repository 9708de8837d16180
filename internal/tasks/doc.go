// Package tasks holds the records of MCP tasks (long tool calls run in the
// background, both the 2025-11-25 experimental design and the 2026-07-28
// io.modelcontextprotocol/tasks extension) behind a small Store
// interface, with an in-memory implementation (NewMemory). It knows
// nothing of JSON-RPC or of plugins: the protocol engine creates, updates
// and reads Task records through a Store and learns of changes made
// elsewhere (another process sharing the store) through a Notifier.
//
// A Task is plain data that round-trips through encoding/json, so that a
// shared store (Redis) can keep it as one value. Every read and write
// names the principal the task is bound to: a task of another principal
// is reported as ErrNotFound, exactly like a task that never existed.
// Ids come from crypto/rand (NewID, 128 bits).
//
// A Store enforces three rules, which package taskstest checks for any
// implementation (RunStoreTests): the caps on live tasks (Limits), the
// retention of a task until its ExpiresAt (then it is gone, whatever its
// status), and that a terminal status never changes again.
package tasks
