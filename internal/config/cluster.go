package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Cluster is the [cluster] table: the replicas of one deployment share
// their state (plugin kv, tasks, legacy sessions, notifications) in one
// Redis and seal what they hand to clients with one key, so that any
// replica serves any request. Absent, each process keeps its state to
// itself.
type Cluster struct {
	// Redis is the server's URL: redis://[user:password@]host[:port][/db]
	// or rediss:// for TLS. Required.
	Redis RedisURL `toml:"redis" json:"redis"`
	// Key is the shared secret that seals requestState, session ids and
	// event ids, the same on every replica (write "${WASMCP_CLUSTER_KEY}"
	// to keep it out of the file). At least 32 characters. Required.
	Key Secret `toml:"key" json:"key"`
	// RedisLine, KeyLine and Line are the lines of the redis and key keys
	// and of the [cluster] header in the file [Parse] read, for errors; 0
	// when unknown. Not keys of the file.
	RedisLine int `toml:"-" json:"-"`
	KeyLine   int `toml:"-" json:"-"`
	Line      int `toml:"-" json:"-"`
}

// MinClusterKey is the shortest [cluster] key accepted, in bytes.
const MinClusterKey = 32

// RedisURL is a Redis server URL whose password is redacted when it is
// printed or marshalled.
type RedisURL string

// String returns the URL with its password replaced by "[redacted]".
func (u RedisURL) String() string {
	pu, err := url.Parse(string(u))
	if err != nil || pu.User == nil {
		if strings.Contains(string(u), "@") {
			return redacted
		}
		return string(u)
	}
	if _, has := pu.User.Password(); has {
		pu.User = url.UserPassword(pu.User.Username(), "xxxxx")
		return strings.Replace(pu.String(), ":xxxxx@", ":"+redacted+"@", 1)
	}
	return pu.String()
}

// MarshalJSON writes the redacted URL.
func (u RedisURL) MarshalJSON() ([]byte, error) { return json.Marshal(u.String()) }

// ParseRedisURL checks a [cluster] redis URL: scheme redis or rediss, a
// host, an optional port (1-65535), an optional database number
// (0-65535) as its only path segment, no query or fragment. It returns
// the database number. Errors never repeat the password.
func ParseRedisURL(s string) (db int, err error) {
	if s == "" {
		return 0, errors.New("required (redis://host:port/db or rediss:// for TLS)")
	}
	pu, perr := url.Parse(s)
	if perr != nil {
		return 0, fmt.Errorf("%s is not a URL (write redis://host:port/db)", RedisURL(s))
	}
	shown := RedisURL(s).String()
	switch {
	case pu.Scheme != "redis" && pu.Scheme != "rediss":
		return 0, fmt.Errorf("%s: scheme must be redis:// or rediss://", shown)
	case pu.Opaque != "":
		return 0, fmt.Errorf("%s: write redis://host:port", shown)
	case pu.Hostname() == "":
		return 0, fmt.Errorf("%s: no host", shown)
	case pu.RawQuery != "" || pu.ForceQuery:
		return 0, fmt.Errorf("%s: query parameters are not supported (wasmcp sets its own timeouts)", shown)
	case pu.Fragment != "":
		return 0, fmt.Errorf("%s: fragments are not supported", shown)
	}
	if p := pu.Port(); p != "" || strings.HasSuffix(pu.Host, ":") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return 0, fmt.Errorf("%s: port %q is not between 1 and 65535", shown, p)
		}
	}
	if strings.ContainsAny(pu.Hostname(), " \t/\\") || net.ParseIP(strings.Trim(pu.Hostname(), "[]")) == nil && !validHostname(pu.Hostname()) {
		return 0, fmt.Errorf("%s: %q is not a host name or IP address", shown, pu.Hostname())
	}
	if path := strings.TrimPrefix(pu.Path, "/"); path != "" {
		n, err := strconv.Atoi(path)
		if err != nil || n < 0 || n > 65535 || strconv.Itoa(n) != path {
			return 0, fmt.Errorf("%s: path %q is not a database number", shown, pu.Path)
		}
		db = n
	}
	return db, nil
}

// validHostname reports whether h is a DNS name: labels of letters,
// digits, '-' and '_', separated by dots.
func validHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !isBare(c) {
				return false
			}
		}
	}
	return true
}

// checkCluster validates the [cluster] table, naming the line of each
// offending key when it is known.
func checkCluster(c *Cluster) []error {
	if c == nil {
		return nil
	}
	var errs []error
	at := func(line int, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if line == 0 {
			line = c.Line
		}
		if line > 0 {
			msg = fmt.Sprintf("line %d: %s", line, msg)
		}
		errs = append(errs, errors.New(msg))
	}
	if _, err := ParseRedisURL(string(c.Redis)); err != nil {
		at(c.RedisLine, "cluster.redis: %v", err)
	}
	switch k := string(c.Key); {
	case k == "":
		at(c.KeyLine, "cluster.key: required: the secret shared by every replica, at least %d characters (key = \"${WASMCP_CLUSTER_KEY}\")", MinClusterKey)
	case len(k) < MinClusterKey:
		at(c.KeyLine, "cluster.key: %d characters; at least %d are required (for example 32 random bytes in hex: openssl rand -hex 32)", len(k), MinClusterKey)
	}
	return errs
}

// locateCluster records the lines of the [cluster] table and its keys.
func locateCluster(c *Config, data []byte) {
	if c.Cluster == nil {
		return
	}
	for _, kl := range locateKeys(data) {
		switch {
		case equalKeys(kl.key, []string{"cluster"}) && c.Cluster.Line == 0:
			c.Cluster.Line = kl.line
		case equalKeys(kl.key, []string{"cluster", "redis"}) && c.Cluster.RedisLine == 0:
			c.Cluster.RedisLine = kl.line
		case equalKeys(kl.key, []string{"cluster", "key"}) && c.Cluster.KeyLine == 0:
			c.Cluster.KeyLine = kl.line
		}
	}
}
