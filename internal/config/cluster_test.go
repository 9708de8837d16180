package config

import (
	"strings"
	"testing"
)

func TestParseRedisURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		db   int
		want string // substring of the error; "" for none
	}{
		{"redis://127.0.0.1:6379/0", 0, ""},
		{"redis://localhost", 0, ""},
		{"rediss://user:pw@redis.example.com:6380/3", 3, ""},
		{"redis://:pw@[::1]:6379/15", 15, ""},
		{"", 0, "required"},
		{"127.0.0.1:6379", 0, "write redis://host:port/db"},
		{"http://127.0.0.1:6379", 0, "scheme"},
		{"redis:127.0.0.1", 0, "write redis://host:port"},
		{"redis://", 0, "no host"},
		{"redis://:6379", 0, "no host"},
		{"redis://h:0", 0, "port"},
		{"redis://h:65536", 0, "port"},
		{"redis://h:", 0, "port"},
		{"redis://h/x", 0, "database number"},
		{"redis://h/01", 0, "database number"},
		{"redis://h/1/2", 0, "database number"},
		{"redis://h/-1", 0, "database number"},
		{"redis://h?dial_timeout=1s", 0, "query"},
		{"redis://h#f", 0, "fragment"},
		{"redis://ho%20st", 0, "not a URL"},
		{"redis://ho_st!", 0, "host name"},
		{"redis://a:secretpw@h/x", 0, "database number"},
	} {
		db, err := ParseRedisURL(tc.url)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.url, err)
		case tc.want == "" && db != tc.db:
			t.Errorf("%q: db %d, want %d", tc.url, db, tc.db)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: error %v, want one containing %q", tc.url, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "secretpw"):
			t.Errorf("%q: error repeats the password: %v", tc.url, err)
		}
	}
}

func TestRedisURLRedacted(t *testing.T) {
	for in, want := range map[string]string{
		"redis://h:6379/0":        "redis://h:6379/0",
		"redis://u:pw@h:6379/0":   "redis://u:[redacted]@h:6379/0",
		"redis://:pw@h":           "redis://:[redacted]@h",
		"redis://u@h":             "redis://u@h",
		"redis://u:p w@h\x7f:1/0": "[redacted]",
		"rediss://u:p%40ss@h:1/2": "rediss://u:[redacted]@h:1/2",
	} {
		if got := RedisURL(in).String(); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// FuzzParseRedisURL checks that the URL check never panics and never
// repeats a password in its error.
func FuzzParseRedisURL(f *testing.F) {
	for _, s := range []string{"redis://127.0.0.1:6379/0", "rediss://u:pw@h:1/2", "redis://[::1]", "redis://h:/", "redis://%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := ParseRedisURL(s)
		if err == nil {
			return
		}
		if pw := passwordOf(s); len(pw) >= 4 && strings.Contains(err.Error(), pw) && !strings.Contains(strings.Replace(s, ":"+pw+"@", "", 1), pw) {
			t.Fatalf("error %q repeats the password of %q", err, s)
		}
	})
}

// passwordOf returns the text between "://user:" and "@", or "".
func passwordOf(s string) string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}
	userinfo, _, ok := strings.Cut(rest, "@")
	if !ok {
		return ""
	}
	_, pw, _ := strings.Cut(userinfo, ":")
	return pw
}
