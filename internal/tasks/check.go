package tasks

// CheckUpdate reports whether c may replace old in a Store: the rules
// Update enforces (ID, Principal, CreatedAt, TTL and ExpiresAt unchanged,
// a valid status, ErrTerminal for a terminal status that would change),
// for stores kept outside this package (internal/cluster).
func CheckUpdate(old, c *Task) error { return checkUpdate(old, c) }
