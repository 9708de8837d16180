package plugins

import (
	"errors"
	"testing"
	"time"
)

func TestStateSealer(t *testing.T) {
	s, err := newStateSealer(nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	b := stateBinding{Plugin: "p", Method: "tools/call", Target: "t"}
	tok := s.seal(b, "round-2")
	got, err := s.open(b, tok)
	if err != nil || got != "round-2" {
		t.Fatalf("open = %q, %v", got, err)
	}
	other, _ := newStateSealer(nil, time.Minute)
	cases := map[string]struct {
		s   *stateSealer
		b   stateBinding
		tok string
	}{
		"tampered suffix": {s, b, tok + "-TAMPERED"},
		"flipped byte":    {s, b, tok[:len(tok)-3] + "AAA"},
		"other tool":      {s, stateBinding{Plugin: "p", Method: "tools/call", Target: "u"}, tok},
		"other plugin":    {s, stateBinding{Plugin: "q", Method: "tools/call", Target: "t"}, tok},
		"other principal": {s, stateBinding{Plugin: "p", Method: "tools/call", Target: "t", Principal: "x"}, tok},
		"other key":       {other, b, tok},
		"raw state":       {s, b, "round-2"},
		"empty":           {s, b, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := tc.s.open(tc.b, tc.tok); !errors.Is(err, ErrBadState) {
				t.Fatalf("open = %v, want ErrBadState", err)
			}
		})
	}
	t.Run("expired", func(t *testing.T) {
		s2, _ := newStateSealer(nil, time.Second)
		tok := s2.seal(b, "x")
		s2.now = func() time.Time { return time.Now().Add(time.Hour) }
		if _, err := s2.open(b, tok); !errors.Is(err, ErrBadState) {
			t.Fatalf("open = %v, want ErrBadState", err)
		}
	})
}
