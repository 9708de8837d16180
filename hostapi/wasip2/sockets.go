package wasip2

import (
	"context"
	"errors"
)

// network is wasi:sockets' network resource: the only socket resource
// a component can get, since every socket and name lookup is refused
// (components reach the network only through wasi:http).
type network struct{}

// errNoSocket is any socket method: no socket or stream can exist, so a
// call means a handle canon would have refused; it is a trap.
var errNoSocket = errors.New("wasip2: wasi:sockets: no socket exists")

// socketMethods are the wasi:sockets functions that need a socket or a
// stream, which no component can have.
var socketMethods = []string{
	"wasi:sockets/ip-name-lookup#[method]resolve-address-stream.resolve-next-address",
	"wasi:sockets/ip-name-lookup#[method]resolve-address-stream.subscribe",
	"wasi:sockets/tcp#[method]tcp-socket.accept",
	"wasi:sockets/tcp#[method]tcp-socket.address-family",
	"wasi:sockets/tcp#[method]tcp-socket.finish-bind",
	"wasi:sockets/tcp#[method]tcp-socket.finish-connect",
	"wasi:sockets/tcp#[method]tcp-socket.finish-listen",
	"wasi:sockets/tcp#[method]tcp-socket.hop-limit",
	"wasi:sockets/tcp#[method]tcp-socket.is-listening",
	"wasi:sockets/tcp#[method]tcp-socket.keep-alive-count",
	"wasi:sockets/tcp#[method]tcp-socket.keep-alive-enabled",
	"wasi:sockets/tcp#[method]tcp-socket.keep-alive-idle-time",
	"wasi:sockets/tcp#[method]tcp-socket.keep-alive-interval",
	"wasi:sockets/tcp#[method]tcp-socket.local-address",
	"wasi:sockets/tcp#[method]tcp-socket.receive-buffer-size",
	"wasi:sockets/tcp#[method]tcp-socket.remote-address",
	"wasi:sockets/tcp#[method]tcp-socket.send-buffer-size",
	"wasi:sockets/tcp#[method]tcp-socket.set-hop-limit",
	"wasi:sockets/tcp#[method]tcp-socket.set-keep-alive-count",
	"wasi:sockets/tcp#[method]tcp-socket.set-keep-alive-enabled",
	"wasi:sockets/tcp#[method]tcp-socket.set-keep-alive-idle-time",
	"wasi:sockets/tcp#[method]tcp-socket.set-keep-alive-interval",
	"wasi:sockets/tcp#[method]tcp-socket.set-listen-backlog-size",
	"wasi:sockets/tcp#[method]tcp-socket.set-receive-buffer-size",
	"wasi:sockets/tcp#[method]tcp-socket.set-send-buffer-size",
	"wasi:sockets/tcp#[method]tcp-socket.shutdown",
	"wasi:sockets/tcp#[method]tcp-socket.start-bind",
	"wasi:sockets/tcp#[method]tcp-socket.start-connect",
	"wasi:sockets/tcp#[method]tcp-socket.start-listen",
	"wasi:sockets/tcp#[method]tcp-socket.subscribe",
	"wasi:sockets/udp#[method]incoming-datagram-stream.receive",
	"wasi:sockets/udp#[method]incoming-datagram-stream.subscribe",
	"wasi:sockets/udp#[method]outgoing-datagram-stream.check-send",
	"wasi:sockets/udp#[method]outgoing-datagram-stream.send",
	"wasi:sockets/udp#[method]outgoing-datagram-stream.subscribe",
	"wasi:sockets/udp#[method]udp-socket.address-family",
	"wasi:sockets/udp#[method]udp-socket.finish-bind",
	"wasi:sockets/udp#[method]udp-socket.local-address",
	"wasi:sockets/udp#[method]udp-socket.receive-buffer-size",
	"wasi:sockets/udp#[method]udp-socket.remote-address",
	"wasi:sockets/udp#[method]udp-socket.send-buffer-size",
	"wasi:sockets/udp#[method]udp-socket.set-receive-buffer-size",
	"wasi:sockets/udp#[method]udp-socket.set-send-buffer-size",
	"wasi:sockets/udp#[method]udp-socket.set-unicast-hop-limit",
	"wasi:sockets/udp#[method]udp-socket.start-bind",
	"wasi:sockets/udp#[method]udp-socket.stream",
	"wasi:sockets/udp#[method]udp-socket.subscribe",
	"wasi:sockets/udp#[method]udp-socket.unicast-hop-limit",
}

func socketFuncs() map[string]impl {
	const s = "wasi:sockets/"
	denied := func(ctx context.Context, st *State, args []any) (any, error) {
		return fail("access-denied"), nil
	}
	funcs := map[string]impl{
		s + "instance-network#instance-network": func(ctx context.Context, st *State, args []any) (any, error) {
			return st.add(&network{})
		},
		s + "tcp-create-socket#create-tcp-socket": denied,
		s + "udp-create-socket#create-udp-socket": denied,
		s + "ip-name-lookup#resolve-addresses": func(ctx context.Context, st *State, args []any) (any, error) {
			if _, err := self[*network](st, args); err != nil {
				return nil, err
			}
			return fail("access-denied"), nil
		},
	}
	for _, name := range socketMethods {
		funcs[name] = func(context.Context, *State, []any) (any, error) { return nil, errNoSocket }
	}
	return funcs
}
