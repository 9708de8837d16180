package plugins

import "testing"

func TestURITemplateMatch(t *testing.T) {
	tests := []struct {
		tmpl, uri string
		ok        bool
		vars      map[string]string
	}{
		{"test://template/{id}/data", "test://template/123/data", true, map[string]string{"id": "123"}},
		{"test://template/{id}/data", "test://template/1/2/data", false, nil},
		{"test://template/{id}/data", "test://template/123/datax", false, nil},
		{"notes://{id}", "notes://a%20b", true, map[string]string{"id": "a b"}},
		{"file:///{+path}", "file:///a/b/c.txt", true, map[string]string{"path": "a/b/c.txt"}},
		{"weather://station{/id}", "weather://station/KSEA", true, map[string]string{"id": "KSEA"}},
		{"search://q{?term,limit}", "search://q?term=x&limit=3", true, map[string]string{}},
		{"a://{x},{y}", "a://1,2", true, map[string]string{"x": "1", "y": "2"}},
		{"plain://no-vars", "plain://no-vars", true, map[string]string{}},
		{"plain://no-vars", "plain://no-varsX", false, nil},
		{"dot://{x}.json", "dot://a.b.json", true, map[string]string{"x": "a.b"}},
	}
	for _, tc := range tests {
		t.Run(tc.tmpl+"|"+tc.uri, func(t *testing.T) {
			tmpl, err := ParseURITemplate(tc.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			vars, ok := tmpl.Match(tc.uri)
			if ok != tc.ok {
				t.Fatalf("Match = %v, want %v", ok, tc.ok)
			}
			for k, v := range tc.vars {
				if vars[k] != v {
					t.Errorf("var %s = %q, want %q", k, vars[k], v)
				}
			}
		})
	}
}

func TestURITemplateErrors(t *testing.T) {
	for _, s := range []string{"a://{", "a://}", "a://{}", "a://{a b}", "a://{x}}"} {
		if _, err := ParseURITemplate(s); err == nil {
			t.Errorf("ParseURITemplate(%q): want error", s)
		}
	}
}

func FuzzURITemplate(f *testing.F) {
	for _, s := range []string{"test://template/{id}/data", "file:///{+path}", "x{?a,b}", "{#f}", "a{.b}{;c}"} {
		f.Add(s, "test://template/1/data")
	}
	f.Fuzz(func(t *testing.T, tmpl, uri string) {
		u, err := ParseURITemplate(tmpl)
		if err != nil {
			return
		}
		u.Match(uri)
	})
}
