package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
)

// namePattern is the rule for names exposed to clients (DESIGN.md).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// prefixPattern allows an empty prefix; prefix+name is checked again when
// the plugin's names are known.
var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{0,63}$`)

var hexPattern = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

// ValidName reports whether name may be exposed to clients as a plugin,
// tool or prompt name: 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'.
func ValidName(name string) bool { return namePattern.MatchString(name) }

// Validate checks c and returns every problem found, joined with
// errors.Join, or nil.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if strings.TrimSpace(c.Server.Name) == "" {
		bad("server.name: must not be empty")
	}
	for i, sk := range c.Skills {
		if strings.TrimSpace(sk.Dir) == "" {
			bad("skills[%d]: dir must not be empty", i)
		}
	}
	switch c.Server.LogLevel {
	case "debug", "info", "warn", "warning", "error":
	default:
		bad("server.log_level: %q is not one of debug, info, warn, error", c.Server.LogLevel)
	}
	switch c.Server.LogFormat {
	case "", "text", "json":
	default:
		bad("server.log_format: %q is not one of text, json", c.Server.LogFormat)
	}
	switch c.Server.Pin {
	case "", PinBlock, PinWarn, PinOff:
	default:
		bad("server.pin: %q is not one of block, warn, off", c.Server.Pin)
	}
	switch c.Telemetry.Protocol {
	case "", "http/protobuf", "grpc":
	default:
		bad("telemetry.protocol: %q is not one of http/protobuf, grpc", c.Telemetry.Protocol)
	}
	if c.Telemetry.ScheduleDelay < 0 {
		bad("telemetry.schedule_delay: must not be negative")
	}
	for _, u := range []struct{ key, v string }{{"endpoint", c.Telemetry.Endpoint}, {"traces_endpoint", c.Telemetry.TracesEndpoint}} {
		if u.v == "" {
			continue
		}
		if pu, err := url.Parse(u.v); err != nil || pu.Host == "" || (pu.Scheme != "http" && pu.Scheme != "https") {
			bad("telemetry.%s: %q is not an http or https URL", u.key, u.v)
		}
	}
	for i, d := range c.Server.PluginDirs {
		if d == "" {
			bad("server.plugin_dirs[%d]: must not be empty", i)
		}
	}
	if c.Server.ShutdownGrace <= 0 {
		bad("server.shutdown_grace: must be positive")
	}

	if !strings.HasPrefix(c.HTTP.Path, "/") {
		bad("http.path: %q must start with \"/\"", c.HTTP.Path)
	}
	if c.HTTP.SSE {
		switch {
		case !strings.HasPrefix(c.HTTP.SSEPath, "/"):
			bad("http.sse_path: %q must start with \"/\"", c.HTTP.SSEPath)
		case c.HTTP.SSEPath == c.HTTP.Path:
			bad("http.sse_path: %q is already http.path", c.HTTP.SSEPath)
		}
		switch {
		case !strings.HasPrefix(c.HTTP.MessagesPath, "/"):
			bad("http.messages_path: %q must start with \"/\"", c.HTTP.MessagesPath)
		case c.HTTP.MessagesPath == c.HTTP.Path || c.HTTP.MessagesPath == c.HTTP.SSEPath:
			bad("http.messages_path: %q is already http.path or http.sse_path", c.HTTP.MessagesPath)
		case strings.ContainsAny(c.HTTP.MessagesPath, "?#"):
			bad("http.messages_path: %q must be a path without query or fragment", c.HTTP.MessagesPath)
		}
	}
	for i, o := range c.HTTP.AllowedOrigins {
		if err := checkOrigin(o); err != nil {
			bad("http.allowed_origins[%d]: %w", i, err)
		}
	}
	for i, h := range c.HTTP.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ \t@") {
			bad("http.allowed_hosts[%d]: %q is not a host or host:port", i, h)
		}
	}
	if _, err := ParsePrefixes(c.HTTP.TrustedProxies); err != nil {
		bad("http.trusted_proxies: %w", err)
	}
	if c.HTTP.MaxBody == 0 {
		bad("http.max_body: must be positive")
	}
	if c.HTTP.MaxHeaderBytes < 4<<10 || c.HTTP.MaxHeaderBytes > 16<<20 {
		bad("http.max_header_bytes: %s is not between 4KiB and 16MiB", c.HTTP.MaxHeaderBytes)
	}
	for _, d := range []struct {
		key string
		v   Duration
	}{
		{"read_header_timeout", c.HTTP.ReadHeaderTimeout},
		{"read_timeout", c.HTTP.ReadTimeout},
		{"write_timeout", c.HTTP.WriteTimeout},
		{"idle_timeout", c.HTTP.IdleTimeout},
		{"session_idle_timeout", c.HTTP.SessionIdleTimeout},
	} {
		if d.v <= 0 {
			bad("http.%s: must be positive", d.key)
		}
	}
	if c.HTTP.MaxConns <= 0 {
		bad("http.max_conns: must be positive")
	}
	if c.HTTP.MaxSessions <= 0 {
		bad("http.max_sessions: must be positive")
	}

	errs = append(errs, checkLimits("limits", c.Limits, false)...)
	for _, n := range []struct {
		key string
		v   int
	}{
		{"max_concurrent", c.Limits.MaxConcurrent},
		{"max_waiting", c.Limits.MaxWaiting},
		{"plugin_concurrent", c.Limits.PluginConcurrent},
		{"principal_concurrent", c.Limits.PrincipalConcurrent},
		{"principal_burst", c.Limits.PrincipalBurst},
		{"max_batch", c.Limits.MaxBatch},
		{"max_subscriptions", c.Limits.MaxSubscriptions},
		{"max_tasks", c.Limits.MaxTasks},
		{"max_tasks_per_principal", c.Limits.MaxTasksPerPrincipal},
		{"max_manifest_items", c.Limits.MaxManifestItems},
	} {
		if n.v < 0 {
			bad("limits.%s: must not be negative", n.key)
		}
	}
	if c.Limits.PrincipalRate < 0 || c.Limits.PrincipalRate != c.Limits.PrincipalRate || c.Limits.PrincipalRate > 1e9 {
		bad("limits.principal_rate: %v is not a rate of calls a second (0 for none)", c.Limits.PrincipalRate)
	}
	for _, d := range []struct {
		key string
		v   Duration
	}{{"task_timeout", c.Limits.TaskTimeout}, {"task_ttl", c.Limits.TaskTTL}, {"task_lease", c.Limits.TaskLease}} {
		if d.v != 0 && (d.v < Duration(time.Second) || d.v > Duration(7*24*time.Hour)) {
			bad("limits.%s: %s is not between 1s and 168h", d.key, d.v)
		}
	}
	for _, z := range []struct {
		key      string
		v        Size
		min, max Size
	}{
		{"limits.max_uri", c.Limits.MaxURI, 256, 16 << 20},
		{"limits.notify_queue", c.Limits.NotifyQueue, 4 << 10, 1 << 30},
		{"http.replay_buffer", c.HTTP.ReplayBuffer, 4 << 10, 1 << 30},
		{"limits.max_batch_response", c.Limits.MaxBatchResponse, 1 << 10, 1 << 30},
		{"limits.max_manifest_bytes", c.Limits.MaxManifestBytes, 1 << 10, 64 << 20},
		{"limits.max_task_bytes", c.Limits.MaxTaskBytes, 64 << 10, 64 << 30},
		{"limits.max_subscription_bytes", c.Limits.MaxSubscriptionBytes, 64 << 10, 64 << 30},
		{"limits.max_task_bytes_per_principal", c.Limits.MaxTaskBytesPerPrincipal, 64 << 10, 64 << 30},
	} {
		if z.v != 0 && (z.v < z.min || z.v > z.max) {
			bad("%s: %s is not between %s and %s", z.key, z.v, z.min, z.max)
		}
	}
	errs = append(errs, checkModuleLimits(c.Limits)...)
	scoped := ""
	for i := range c.Plugins {
		if len(c.Plugins[i].Scopes) > 0 {
			scoped = fmt.Sprintf("plugins[%d] (%q)", i, c.Plugins[i].Name)
			break
		}
	}
	errs = append(errs, checkAuth(&c.Auth, scoped)...)
	errs = append(errs, checkAuthz(&c.Authz)...)
	errs = append(errs, checkAudit(&c.Audit)...)
	errs = append(errs, checkCluster(c.Cluster)...)

	seen := map[string]int{}
	for i := range c.Plugins {
		p := &c.Plugins[i]
		where := fmt.Sprintf("plugins[%d]", i)
		if p.Name != "" {
			where = fmt.Sprintf("plugins[%d] (%q)", i, p.Name)
		}
		if !ValidName(p.Name) {
			bad("%s: name: %q must match ^[A-Za-z0-9_-]{1,64}$", where, p.Name)
		} else if j, dup := seen[p.Name]; dup {
			bad("%s: name: duplicate of plugins[%d]", where, j)
		} else {
			seen[p.Name] = i
		}
		switch {
		case p.Path == "" && p.URL == "":
			bad("%s: path or url: required", where)
		case p.Path != "" && p.URL != "":
			bad("%s: path and url: give one, not both", where)
		case p.URL != "":
			if err := checkPluginURL(p.URL); err != nil {
				bad("%s: url: %w", where, err)
			}
		}
		errs = append(errs, checkSource(where, p)...)
		if p.SHA256 != "" && !hexPattern.MatchString(p.SHA256) {
			bad("%s: sha256: must be 64 hex digits, got %d characters", where, len(p.SHA256))
		}
		if !prefixPattern.MatchString(p.Prefix) {
			bad("%s: prefix: %q must match ^[A-Za-z0-9_-]{0,63}$", where, p.Prefix)
		}
		override := Limits{Memory: p.Memory, Timeout: p.Timeout, MaxOutput: p.MaxOutput, Instances: p.Instances, MaxQueue: p.MaxQueue, QueueWait: p.QueueWait, Idle: p.Idle}
		errs = append(errs, checkLimits(where, override, true)...)
		errs = append(errs, checkScopes(where+": scopes", p.Scopes)...)
		errs = append(errs, checkShaping(where, p)...)
		errs = append(errs, checkGrants(where+": grants", &p.Grants)...)
	}
	return errors.Join(errs...)
}

// checkLimits checks one set of limits; with overrides, zero values mean
// "inherit" and are allowed.
func checkLimits(where string, l Limits, overrides bool) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(where+": "+format, args...)) }
	switch {
	case l.Memory == 0 && !overrides:
		bad("memory: must be positive")
	case l.Memory != 0 && l.Memory < 64<<10:
		bad("memory: %s is less than one 64KiB page", l.Memory)
	case l.Memory > maxMemory:
		bad("memory: %s is more than a wasm32 module can address (4GiB)", l.Memory)
	}
	if l.Timeout < 0 || l.Timeout == 0 && !overrides {
		bad("timeout: must be positive")
	}
	if l.MaxOutput == 0 && !overrides {
		bad("max_output: must be positive")
	}
	if l.Instances < 0 || l.Instances == 0 && !overrides {
		bad("instances: must be positive")
	}
	if l.MaxQueue < 0 {
		bad("max_queue: must not be negative")
	}
	if l.QueueWait < 0 {
		bad("queue_wait: must not be negative")
	}
	if l.Idle < 0 {
		bad("idle: must not be negative")
	}
	if l.BackgroundCPUs < -1 {
		bad("background_cpus: must be -1 (scheduler off), 0 (default) or positive")
	}
	if l.CPUSlice < 0 {
		bad("cpu_slice: must not be negative")
	}
	return errs
}

func checkGrants(where string, g *Grants) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(where+"."+format, args...)) }
	for i, rule := range g.HTTP {
		if err := checkHTTPRule(rule); err != nil {
			bad("http[%d]: %w", i, err)
		}
	}
	for _, k := range sortedKeys(g.Env) {
		if !validEnvName(k) {
			bad("env: %q is not a valid environment variable name", k)
		}
		if strings.ContainsRune(g.Env[k], 0) {
			bad("env.%s: value contains a NUL byte", k)
		}
	}
	guests := map[string]int{}
	for i, m := range g.FS {
		if m.Host == "" {
			bad("fs[%d].host: required", i)
		}
		switch {
		case !strings.HasPrefix(m.Guest, "/"):
			bad("fs[%d].guest: %q must be an absolute path", i, m.Guest)
		case path.Clean(m.Guest) != m.Guest && m.Guest != "/":
			bad("fs[%d].guest: %q is not clean (want %q)", i, m.Guest, path.Clean(m.Guest))
		default:
			if j, dup := guests[m.Guest]; dup {
				bad("fs[%d].guest: %q is already mounted by fs[%d]", i, m.Guest, j)
			}
			guests[m.Guest] = i
		}
		if m.Mode != "ro" && m.Mode != "rw" {
			bad("fs[%d].mode: %q is not \"ro\" or \"rw\"", i, m.Mode)
		}
	}
	for _, k := range sortedKeys(g.Config) {
		if k == "" {
			bad("config: empty key")
		}
	}
	return errs
}

// checkHTTPRule checks an http grant: an absolute http or https URL with a
// host and no user info, query or fragment.
func checkHTTPRule(rule string) error {
	u, err := url.Parse(rule)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", rule, errors.Unwrap(err))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: scheme must be http or https", rule)
	case u.Opaque != "" || u.Hostname() == "":
		return fmt.Errorf("%q: missing host", rule)
	case strings.ContainsAny(u.Hostname(), "*%"):
		return fmt.Errorf("%q: wildcards are not supported; list each host", rule)
	case u.User != nil:
		return fmt.Errorf("%q: must not contain user info", rule)
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(rule, "?#"):
		return fmt.Errorf("%q: must not contain a query or fragment", rule)
	}
	return nil
}

// checkOrigin checks an allowed origin: scheme://host[:port], nothing more.
func checkOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not an origin (scheme://host[:port])", o)
	}
	return nil
}

// checkModuleLimits checks the module limits of [limits]: zero (the
// default) or a positive count that fits the runtime's 32-bit limits.
func checkModuleLimits(l Limits) []error {
	var errs []error
	for _, c := range []struct {
		key string
		v   int
	}{
		{"max_table_elements", l.MaxTableElements},
		{"max_functions", l.MaxFunctions},
		{"max_locals", l.MaxLocals},
		{"max_nesting", l.MaxNesting},
		{"max_br_table", l.MaxBrTable},
		{"max_globals", l.MaxGlobals},
		{"max_segments", l.MaxSegments},
	} {
		if c.v < 0 || c.v > math.MaxUint32 {
			errs = append(errs, fmt.Errorf("limits.%s: %d is not between 0 (the default) and %d", c.key, c.v, uint32(math.MaxUint32)))
		}
	}
	if l.MaxModuleSize > 1<<32 {
		errs = append(errs, fmt.Errorf("limits.max_module_size: %s is more than 4GiB", l.MaxModuleSize))
	}
	if l.MaxFunctionSize >= 1<<32 {
		errs = append(errs, fmt.Errorf("limits.max_function_size: %s is not below 4GiB", l.MaxFunctionSize))
	}
	if l.CompileTimeout < 0 {
		errs = append(errs, errors.New("limits.compile_timeout: must not be negative"))
	}
	return errs
}

// checkPluginURL checks the shape of a plugin url; the fetcher parses it
// fully (and reports a bad one naming the plugin).
func checkPluginURL(s string) error {
	switch {
	case strings.HasPrefix(s, "oci://"):
		rest := strings.TrimPrefix(s, "oci://")
		slash := strings.IndexByte(rest, '/')
		if slash <= 0 || !strings.ContainsAny(rest[slash:], ":@") {
			return fmt.Errorf("%q: want oci://HOST[:PORT]/REPO:TAG or oci://HOST[:PORT]/REPO@sha256:HEX", s)
		}
	case strings.HasPrefix(s, "https://"):
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || u.User != nil {
			return fmt.Errorf("%q: want https://HOST/PATH without user info", s)
		}
	default:
		return fmt.Errorf("%q: scheme must be oci:// or https://", s)
	}
	return nil
}

// checkSource checks the keys that only mean something for url plugins.
func checkSource(where string, p *Plugin) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(where+": "+format, args...)) }
	if p.URL == "" {
		if p.Verify != nil {
			bad("verify: needs url")
		}
		if p.Refresh != 0 {
			bad("refresh: needs url")
		}
		if p.Required {
			bad("required: needs url (path plugins are always required)")
		}
		return errs
	}
	if p.Refresh < 0 {
		bad("refresh: must not be negative")
	}
	v := p.Verify
	if v == nil {
		return errs
	}
	if !strings.HasPrefix(p.URL, "oci://") {
		bad("verify: signatures are looked up in OCI registries; needs an oci:// url")
	}
	keyless := v.Identity != "" || v.IdentityRegexp != "" || v.Issuer != "" || v.TrustedRoot != ""
	switch {
	case v.Key != "" && keyless:
		bad("verify: key and keyless (identity, identity_regexp, issuer, trusted_root): give one")
	case v.Key != "":
	case !keyless:
		bad("verify: key, or identity or identity_regexp with issuer and trusted_root: required")
	default:
		if (v.Identity == "") == (v.IdentityRegexp == "") {
			bad("verify: give one of identity and identity_regexp")
		}
		if v.IdentityRegexp != "" {
			if _, err := regexp.Compile(v.IdentityRegexp); err != nil {
				bad("verify.identity_regexp: %w", err)
			}
		}
		if v.Issuer == "" {
			bad("verify.issuer: required for keyless verification")
		}
		if v.TrustedRoot == "" {
			bad("verify.trusted_root: required for keyless verification (it is offline)")
		}
	}
	return errs
}

// checkShaping checks a plugin's tools, hide, override, rate and burst.
func checkShaping(where string, p *Plugin) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(where+": "+format, args...)) }
	for _, list := range []struct {
		key   string
		names []string
	}{{"tools", p.Tools}, {"hide", p.Hide}} {
		seen := map[string]bool{}
		for _, n := range list.names {
			switch {
			case !namePattern.MatchString(n):
				bad("%s: %q is not a tool name (%s)", list.key, n, namePattern)
			case seen[n]:
				bad("%s: %q is listed twice", list.key, n)
			}
			seen[n] = true
		}
	}
	renamed := map[string]string{}
	for _, orig := range slices.Sorted(maps.Keys(p.Override)) {
		o := p.Override[orig]
		if !namePattern.MatchString(orig) {
			bad("override.%s: %q is not a tool name (%s)", orig, orig, namePattern)
		}
		if o.Name == "" && o.Description == "" {
			bad("override.%s: give name, description or both", orig)
		}
		if o.Name != "" {
			if !namePattern.MatchString(p.Prefix + o.Name) {
				bad("override.%s: name: %q (with the prefix %q) is not a tool name (%s)", orig, o.Name, p.Prefix, namePattern)
			}
			if other, dup := renamed[o.Name]; dup {
				bad("override.%s: name: %q is also the new name of %q", orig, o.Name, other)
			}
			renamed[o.Name] = orig
		}
		if len(o.Description) > 64<<10 {
			bad("override.%s: description: %d bytes, at most 64KiB", orig, len(o.Description))
		}
	}
	switch {
	case p.Burst < 0:
		bad("burst: must not be negative")
	case p.Burst > 0 && p.Rate.IsZero():
		bad("burst: needs rate")
	case p.Burst > 1_000_000:
		bad("burst: %d, at most 1000000", p.Burst)
	}
	return errs
}
