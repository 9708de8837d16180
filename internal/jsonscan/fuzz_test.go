package jsonscan

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzValid checks Valid against encoding/json: they agree on valid UTF-8
// input, and Valid refuses invalid UTF-8.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2.5e-3,-0,true,false,null,"\u00e9\n"]}`, ` "x" `, `01`, `1.`, `-`, `{"a" 1}`, `[1,]`, `{"a":1,}`, "\"\x01\"", `"\ud800"`, `1e+`, `[[[]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := Valid(data)
		if !utf8.Valid(data) {
			if got {
				t.Fatalf("Valid accepted invalid UTF-8 %q", data)
			}
			return
		}
		if want := json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", data, got, want)
		}
	})
}
