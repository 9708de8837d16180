package server

import "time"

// The tests expect every configured plugin at the first request: under the
// race detector, with a cold compilation cache, on a loaded machine, a Go
// plugin can take longer than the 30 s a real server waits at startup
// (TestSlotShareKeys saw its plugin still loading). Tests of slow loading
// set Options.LoadWait themselves.
func init() { defaultLoadWait = 3 * time.Minute }
