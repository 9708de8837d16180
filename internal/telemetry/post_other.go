//go:build !unix

package telemetry

import "net"

// peerClosed reports false: a stale connection is found when its post
// fails.
func peerClosed(net.Conn, bool) bool { return false }

const peekable = false // peerClosed sees nothing
