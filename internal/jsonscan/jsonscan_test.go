package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendString(t *testing.T) {
	tests := []string{"", "plain", "quote\"back\\slash", "ctl\x00\x1f\t\r\n\b\f\x7f", "uni é ✓ 😀", "bad \xff utf8", "ls\u2028ps\u2029", "<html>&"}
	for _, s := range tests {
		t.Run(s, func(t *testing.T) {
			b := AppendString(nil, s)
			// Byte for byte what encoding/json writes without HTML escaping.
			var enc bytes.Buffer
			e := json.NewEncoder(&enc)
			e.SetEscapeHTML(false)
			if err := e.Encode(s); err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimSuffix(enc.String(), "\n"); string(b) != want {
				t.Errorf("AppendString = %s, encoding/json writes %s", b, want)
			}
			var back string
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("Unmarshal(%s): %v", b, err)
			}
			want := strings.ToValidUTF8(s, "\uFFFD")
			if back != want {
				t.Fatalf("round trip = %q, want %q", back, want)
			}
		})
	}
}

func TestMemberAndIter(t *testing.T) {
	obj := []byte(`{"a":1,"b\u0063":"x","nested":{"a":[1,{"z":"}"}]},"a":2}`)
	if v, ok := Member(obj, "a"); !ok || string(v) != "2" {
		t.Errorf("Member(a) = %s, %v; want last duplicate 2", v, ok)
	}
	if v, ok := Member(obj, "bc"); !ok || string(v) != `"x"` {
		t.Errorf("Member(bc) = %s, %v", v, ok)
	}
	if v, ok := Member(obj, "nested"); !ok || string(v) != `{"a":[1,{"z":"}"}]}` {
		t.Errorf("Member(nested) = %s, %v", v, ok)
	}
	if _, ok := Member(obj, "z"); ok {
		t.Error("Member(z) found a nested key")
	}
	if _, ok := Member([]byte(`[1]`), "a"); ok {
		t.Error("Member on array")
	}
	it, _ := NewArrayIter([]byte(`[ 1 , "a" , {"b":[2]} , null ]`))
	var got []string
	for {
		v, ok := it.Next()
		if !ok {
			break
		}
		got = append(got, string(v))
	}
	if strings.Join(got, "|") != `1|"a"|{"b":[2]}|null` {
		t.Errorf("array elements = %q", got)
	}
}

func TestValid(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`{}`, true}, {` [ ] `, true}, {`{"a":{"b":[1,{"c":null}]}}`, true}, {`"\u00e9\t\"x\""`, true},
		{`-0.5e+10`, true}, {`0`, true}, {"\"é✓😀\"", true},
		{``, false}, {` `, false}, {`{`, false}, {`{"a"}`, false}, {`{"a":}`, false}, {`[1 2]`, false},
		{`01`, false}, {`1.`, false}, {`.5`, false}, {`+1`, false}, {`1e`, false}, {`tru`, false}, {`nul`, false},
		{`"\x"`, false}, {`"\u12"`, false}, {"\"a\nb\"", false}, {"\"\xff\"", false}, {`{} {}`, false}, {`[1,]`, false},
		{`{"a":1,}`, false}, {`{1:2}`, false}, {`]`, false},
		{strings.Repeat("[", 10000) + strings.Repeat("]", 10000), true},
		{strings.Repeat("[", 10001) + strings.Repeat("]", 10001), false},
	}
	for _, tt := range tests {
		name := tt.in
		if len(name) > 20 {
			name = name[:20]
		}
		t.Run(name, func(t *testing.T) {
			if got := Valid([]byte(tt.in)); got != tt.want {
				t.Fatalf("Valid = %v, want %v", got, tt.want)
			}
			if utf8.Valid([]byte(tt.in)) && json.Valid([]byte(tt.in)) != tt.want {
				t.Fatalf("encoding/json disagrees")
			}
		})
	}
}

func TestValueHelpers(t *testing.T) {
	tests := []struct {
		in     string
		kind   byte
		str    string
		isStr  bool
		equals string // StringIs target that must match
	}{
		{in: `"plain"`, kind: 's', str: "plain", isStr: true, equals: "plain"},
		{in: ` "esc\u00e9\n" `, kind: 's', str: "escé\n", isStr: true, equals: "escé\n"},
		{in: `12`, kind: 'n'},
		{in: `-1.5e3`, kind: 'n'},
		{in: `true`, kind: 'b'},
		{in: `false`, kind: 'b'},
		{in: `null`, kind: 'z'},
		{in: `{"a":1}`, kind: 'o'},
		{in: `[1]`, kind: 'a'},
		{in: ``, kind: 0},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if k := Kind([]byte(tt.in)); k != tt.kind {
				t.Errorf("Kind = %q, want %q", k, tt.kind)
			}
			s, ok := String([]byte(tt.in))
			if ok != tt.isStr || s != tt.str {
				t.Errorf("String = %q, %v", s, ok)
			}
			if tt.isStr && !StringIs([]byte(tt.in), tt.equals) {
				t.Errorf("StringIs(%q) = false", tt.equals)
			}
			if StringIs([]byte(tt.in), "other") {
				t.Error("StringIs(other) = true")
			}
		})
	}
	if !KeyIs([]byte(`a\u0062`), "ab") || KeyIs([]byte(`ab`), "AB") {
		t.Error("KeyIs")
	}
}
