package mcp

// InlineTick is how often a stdio connection's watchdog looks at a
// request its reader runs inline (stdio_inline.go): tests on a fake clock
// check when a slow one is taken over.
const InlineTick = inlineTick

// SlowFor is how long a target whose inline run was taken over stays on
// the workers, at first (stdio_inline.go).
const SlowFor = slowFor
