// Package httpguard refuses HTTP/1.x requests whose framing is ambiguous:
// a request that carries both Content-Length and Transfer-Encoding may be
// read one way by a proxy in front of the server and another way by
// net/http (request smuggling, RFC 9112 §6.1). net/http reads such a
// request by its Transfer-Encoding and deletes Content-Length before any
// handler sees it, so the guard follows the framing of every request on
// the raw bytes of each connection, as net/http reads them, and tells the
// handler what it saw.
//
// A request that had both headers is refused (400, and its connection
// closed). When the bytes of a connection cannot be followed (a header or
// chunk line net/http would refuse anyway, too many pipelined requests)
// the connection is closed after its current request, so that no later
// request on it is read with a framing the guard did not check. Following
// the bytes costs one pass over bytes that are read anyway; HTTP/2
// requests pass untouched.
//
// The guard has three parts, all of which an http.Server needs:
//
//	srv := &http.Server{
//		Handler:     httpguard.Handler(h, nil), // nil: a plain-text 400
//		ConnContext: httpguard.ConnContext,
//	}
//	err := srv.Serve(httpguard.Listener(ln))
//
// A server that has a ConnContext of its own calls ConnContext from it. A
// request that came through a listener Listener did not wrap passes the
// Handler unchecked.
package httpguard
