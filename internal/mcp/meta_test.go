package mcp

import "testing"

// TestRequestMeta: Request.Meta gives back the params._meta admission
// read, none when params has no object there, and unknown when
// admission did not read it.
func TestRequestMeta(t *testing.T) {
	for _, c := range []struct {
		name      string
		params    string
		scan      bool // admission scanned params
		want      string
		wantKnown bool
	}{
		{"object", `{"name":"x","_meta":{"traceparent":"t"}}`, true, `{"traceparent":"t"}`, true},
		{"none", `{"name":"x"}`, true, "", true},
		{"not an object", `{"_meta":3}`, true, "", true},
		{"not scanned", `{"_meta":{"a":1}}`, false, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Request{Params: []byte(c.params)}
			if c.scan {
				var mi metaInfo
				scanMeta(r.Params, &mi)
				r.setMeta(mi.meta)
			}
			got, known := r.Meta()
			if string(got) != c.want || known != c.wantKnown {
				t.Errorf("Meta() = %q, %v; want %q, %v", got, known, c.want, c.wantKnown)
			}
		})
	}
}
