// Package cluster puts a wasmcp deployment's shared state in Redis, so
// that several replicas behind a load balancer serve any request with no
// sticky routing: plugin kv ([KV]), notifications between replicas
// ([Bus]), tasks and legacy sessions. It is the only package that
// imports the Redis client (github.com/redis/go-redis/v9).
//
// [Open] connects with bounded timeouts; the client reconnects by itself,
// and a probe pings Redis every second so that [Cluster.Ready] (the
// server's /readyz) reports an unreachable Redis. Every operation is
// bounded by [Options.OpTimeout]: while Redis is down, a call that needs
// it fails with an error wrapping [ErrUnavailable] instead of hanging,
// and everything else keeps working.
//
// [Cluster.Key] derives the keys that seal what one replica hands to a
// client and another must accept (requestState, session ids, event ids)
// from the one [cluster] key.
package cluster
