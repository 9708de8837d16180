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
