package hostapi

import (
	"errors"
	"testing"
)

func TestMayRequest(t *testing.T) {
	all := Grants{Elicitation: true, Sampling: true, Roots: true}
	tests := []struct {
		method string
		g      Grants
		want   error // nil: allowed
	}{
		{"elicitation/create", all, nil},
		{"sampling/createMessage", all, nil},
		{"roots/list", all, nil},
		{"elicitation/create", Grants{Sampling: true, Roots: true}, ErrNotGranted},
		{"sampling/createMessage", Grants{Elicitation: true, Roots: true}, ErrNotGranted},
		{"roots/list", Grants{Elicitation: true, Sampling: true}, ErrNotGranted},
		{"made/up", all, ErrNotClientRequest},
		{"ping", all, ErrNotClientRequest},
		{"tools/call", all, ErrNotClientRequest},
		{"", all, ErrNotClientRequest},
		{"Roots/List", all, ErrNotClientRequest},
	}
	for _, tc := range tests {
		err := tc.g.MayRequest(tc.method)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%+v.MayRequest(%q) = %v, want %v", tc.g, tc.method, err, tc.want)
		}
	}
}
