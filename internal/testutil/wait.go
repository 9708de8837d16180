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

// AwaitReturn waits up to within for done to deliver the result of a
// goroutine that serves (ServeStdio, RunHTTP), and reports an error
// naming what if it does not come: a test's cleanup, after closing what
// the goroutine serves.
func AwaitReturn(t testing.TB, done <-chan error, within time.Duration, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(within):
		t.Errorf("%s did not return", what)
	}
}
