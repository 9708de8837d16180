package testutil

import (
	"testing"
	"time"
)

// Eventually polls cond every few milliseconds until it holds, and fails
// the test with what if it does not within the bound. The bound guards
// against a hung test; pick it generous, no assertion should hang on it.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
	}
}
