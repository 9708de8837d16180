package mcp

import (
	"strings"
	"testing"
)

// FuzzSessionID checks that the seal of session ids accepts the ids the
// server mints, refuses every other string, and never panics.
func FuzzSessionID(f *testing.F) {
	s := &Server{opts: Options{SessionKey: []byte("fuzz-session-key-0123456789abcdef")}}
	raw := "0123456789abcdefABCDEF" // fixed: fuzz workers are other processes
	minted := raw + "." + s.sealSessionID(raw)
	f.Add(minted)
	f.Add(strings.Split(minted, ".")[0])
	f.Add(minted + ".")
	f.Add("")
	f.Add("." + strings.Split(minted, ".")[1])
	f.Fuzz(func(t *testing.T, id string) {
		if s.validSessionID(id) && id != minted {
			t.Fatalf("%q accepted; only %q was minted", id, minted)
		}
	})
}

func TestSessionIDSeal(t *testing.T) {
	s := &Server{opts: Options{SessionKey: []byte("test-session-key-0123456789abcdef")}}
	other := &Server{opts: Options{SessionKey: []byte("another-session-key-0123456789ab")}}
	plain := &Server{}
	id := s.newConnID()
	for _, tc := range []struct {
		name string
		srv  *Server
		id   string
		want bool
	}{
		{"minted", s, id, true},
		{"another key", other, id, false},
		{"no key", plain, id, false},
		{"unsealed", s, strings.Split(id, ".")[0], false},
		{"altered", s, id[:len(id)-1] + "A", id[len(id)-1] == 'A'},
		{"plain id of a keyless server", s, plain.newConnID(), false},
	} {
		if got := tc.srv.validSessionID(tc.id); got != tc.want {
			t.Errorf("%s: valid = %v, want %v", tc.name, got, tc.want)
		}
	}
	if strings.Contains(plain.newConnID(), ".") {
		t.Error("a server without a session key seals its ids")
	}
}

// FuzzSharedEventID checks that the parser of shared event ids never
// panics and accepts, of this server's ids, only those it minted.
func FuzzSharedEventID(f *testing.F) {
	s := &Server{opts: Options{SessionKey: []byte("fuzz-session-key-0123456789abcdef")}, instance: "0011223344556677"}
	const sid = "session"
	minted := s.sharedEventID(sid, 3, 7)
	f.Add(minted)
	f.Add("1.1")
	f.Add("8899aabbccddeeff.xx.1.2")
	f.Add(minted + ".1")
	f.Fuzz(func(t *testing.T, id string) {
		inst, stream, seq, ok := s.parseSharedEventID(sid, id)
		if ok && inst == s.instance && s.sharedEventID(sid, stream, seq) != id {
			// Same stream and seq, another spelling (e.g. "+3" or "03"):
			// harmless, but the seal must still be this stream's.
			if !strings.Contains(id, s.eventSeal(sid, stream)) {
				t.Fatalf("%q accepted with a foreign seal", id)
			}
		}
		if ok && (stream < 0 || seq < 0) {
			t.Fatalf("%q: negative stream or seq", id)
		}
	})
}
