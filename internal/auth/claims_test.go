package auth

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBoundClaims(t *testing.T) {
	long := strings.Repeat("x", MaxClaimString+1)
	many := make([]string, MaxClaimArray+1)
	manyJSON, _ := json.Marshal(many)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"scalars and string arrays kept, in name order", `{"sub":"a","n":1.5,"ok":true,"groups":["x","y"]}`, `{"groups":["x","y"],"n":1.5,"ok":true,"sub":"a"}`},
		{"objects, nulls and mixed arrays left out", `{"sub":"a","o":{"x":1},"z":null,"m":[1,"a"]}`, `{"sub":"a"}`},
		{"a long string left out whole", `{"sub":"a","s":"` + long + `"}`, `{"sub":"a"}`},
		{"a long array left out whole", `{"sub":"a","g":` + string(manyJSON) + `}`, `{"sub":"a"}`},
		{"nothing kept", `{"o":{}}`, ``},
		{"not an object", `[1]`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(boundClaims([]byte(tc.in))); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	// The whole object stays within MaxClaimsBytes.
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 100 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"c` + strings.Repeat("0", 3) + string(rune('a'+i%26)) + strings.Repeat("k", i) + `":"` + strings.Repeat("v", 1000) + `"`)
	}
	b.WriteString(`}`)
	if got := boundClaims([]byte(b.String())); len(got) > MaxClaimsBytes || !json.Valid(got) {
		t.Errorf("%d bytes, valid %v", len(got), json.Valid(got))
	}
}

// FuzzBoundClaims: whatever the payload, the kept claims are nil or a
// JSON object within MaxClaimsBytes whose members are scalars or arrays
// of strings.
func FuzzBoundClaims(f *testing.F) {
	f.Add([]byte(`{"sub":"a","groups":["x"],"n":1,"b":false}`))
	f.Add([]byte(`{"a":{"b":[1,2]},"c":[null,"x"],"d":1e999}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		got := boundClaims(payload)
		if got == nil {
			return
		}
		if len(got) > MaxClaimsBytes {
			t.Fatalf("%d bytes", len(got))
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatalf("not an object: %s: %v", got, err)
		}
		for k, v := range m {
			switch v[0] {
			case '{', 'n':
				t.Fatalf("member %q kept as %s", k, v)
			case '[':
				var ss []string
				if json.Unmarshal(v, &ss) != nil {
					t.Fatalf("member %q: %s", k, v)
				}
			}
		}
	})
}
