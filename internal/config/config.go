package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is the decoded content of a wasmcp.toml file. Its zero value is
// not useful; start from [Default], [Parse] or [Load].
type Config struct {
	Server Server `toml:"server" json:"server"`
	HTTP   HTTP   `toml:"http" json:"http"`
	Limits Limits `toml:"limits" json:"limits"`
	Auth   Auth   `toml:"auth" json:"auth"`
	// Authz is the [authz] table: Cedar policies deciding who may call
	// what (docs/governance.md). Off when it names no policies.
	Authz Authz `toml:"authz" json:"authz,omitzero"`
	// Audit is the [audit] table: the audit trail (docs/governance.md).
	// Off when it names no file.
	Audit Audit `toml:"audit" json:"audit,omitzero"`
	// Telemetry is the [telemetry] table: traces, metrics, per-call usage.
	Telemetry Telemetry `toml:"telemetry" json:"telemetry"`
	// Cluster is the [cluster] table; nil when the file has none (each
	// process then keeps its state to itself).
	Cluster *Cluster `toml:"cluster" json:"cluster,omitempty"`
	Plugins []Plugin `toml:"plugins" json:"plugins"`
	// Skills are the [[skills]] entries: directories of Agent Skills
	// served through the Skills extension (docs/apps-and-skills.md).
	Skills []SkillDir `toml:"skills" json:"skills,omitempty"`
	// File is the configuration file [Load] read (absolute); empty when
	// the configuration did not come from a file. wasmcp.lock lives
	// beside it.
	File string `toml:"-" json:"-"`
}

// SkillDir is one [[skills]] entry: Dir (relative to the configuration
// file) holds one subdirectory per skill, each with a SKILL.md whose
// front matter names it. Skill files are data: served, never executed.
type SkillDir struct {
	Dir string `toml:"dir" json:"dir"`
}

// Server is the [server] table.
type Server struct {
	// Name is the server name reported to clients. Default "wasmcp".
	Name string `toml:"name" json:"name"`
	// Version is the server version reported to clients. Empty means the
	// version of the wasmcp binary.
	Version string `toml:"version" json:"version,omitempty"`
	// Instructions is the optional text returned to clients as the
	// server's instructions. Empty means none.
	Instructions string `toml:"instructions" json:"instructions,omitempty"`
	// PluginDirs are directories whose *.wasm files are loaded as plugins
	// with the default limits and no grants. Relative entries are resolved
	// against the configuration file's directory. Default none.
	PluginDirs []string `toml:"plugin_dirs" json:"plugin_dirs,omitempty"`
	// Watch reloads plugins when their files change. Default false.
	Watch bool `toml:"watch" json:"watch"`
	// CacheDir is the compilation cache directory. Empty means the
	// runtime's default under the user cache directory.
	CacheDir string `toml:"cache_dir" json:"cache_dir,omitempty"`
	// KVDir is where plugin key-value stores are kept, so that plugin data
	// survives restarts. Empty means $XDG_DATA_HOME/wasmcp/kv (else
	// ~/.local/share/wasmcp/kv); the special value ":memory:" keeps the
	// data in memory only.
	KVDir string `toml:"kv_dir" json:"kv_dir,omitempty"`
	// LogLevel is the server's own log level on stderr: debug, info, warn
	// or error. Default "info".
	LogLevel string `toml:"log_level" json:"log_level"`
	// LogFormat is the format of the server's log on stderr: "text" or
	// "json" (one JSON object a line, for machines). Default "text".
	LogFormat string `toml:"log_format" json:"log_format,omitempty"`
	// ShutdownGrace is how long `wasmcp serve` lets the calls in flight
	// finish after SIGTERM or SIGINT before cancelling them. Default 10s.
	ShutdownGrace Duration `toml:"shutdown_grace" json:"shutdown_grace"`
	// Pin is what the server does with a tool, prompt, resource or
	// template whose definition differs from wasmcp.lock, or that the
	// lock does not know: "block" withholds it, "warn" serves it with a
	// WARN, "off" does not compare. Empty means "block" when the lock
	// records definitions, else "off".
	Pin string `toml:"pin" json:"pin,omitempty"`
}

// Telemetry is the [telemetry] table. The OpenTelemetry settings default
// to the standard OTEL_* environment variables, which take precedence
// (see internal/telemetry); traces are off when neither gives an
// endpoint.
type Telemetry struct {
	// Metrics is the address of the Prometheus listener (/metrics,
	// /healthz, /readyz), as `serve --metrics ADDR`. Default none.
	Metrics string `toml:"metrics" json:"metrics,omitempty"`
	// Endpoint is the OTLP base URL (OTEL_EXPORTER_OTLP_ENDPOINT), and
	// TracesEndpoint the traces URL (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
	Endpoint       string `toml:"endpoint" json:"endpoint,omitempty"`
	TracesEndpoint string `toml:"traces_endpoint" json:"traces_endpoint,omitempty"`
	// Protocol is "http/protobuf" (default) or "grpc"
	// (OTEL_EXPORTER_OTLP_PROTOCOL).
	Protocol string `toml:"protocol" json:"protocol,omitempty"`
	// ServiceName is service.name (OTEL_SERVICE_NAME). Default "wasmcp".
	ServiceName string `toml:"service_name" json:"service_name,omitempty"`
	// Sampler is the trace sampler (OTEL_TRACES_SAMPLER) and SamplerArg
	// its argument (OTEL_TRACES_SAMPLER_ARG). Default parentbased_always_on.
	Sampler    string `toml:"sampler" json:"sampler,omitempty"`
	SamplerArg string `toml:"sampler_arg" json:"sampler_arg,omitempty"`
	// ScheduleDelay is the span batch export interval
	// (OTEL_BSP_SCHEDULE_DELAY). Default 5s.
	ScheduleDelay Duration `toml:"schedule_delay" json:"schedule_delay,omitempty"`
	// ResourceAttributes are extra resource attributes
	// (OTEL_RESOURCE_ATTRIBUTES, "k=v,k=v").
	ResourceAttributes string `toml:"resource_attributes" json:"resource_attributes,omitempty"`
	// UsageInMeta puts what each tool call cost in its result's _meta,
	// under "io.wasmcp/usage". Default false.
	UsageInMeta bool `toml:"usage_in_meta" json:"usage_in_meta,omitempty"`
	// Audit logs one record per plugin call (plugin, tool, principal,
	// outcome, duration); capability denials are always logged. Default
	// false.
	Audit bool `toml:"audit" json:"audit,omitempty"`
}

// MemoryKV is the kv_dir value that keeps plugin key-value data in memory.
const MemoryKV = ":memory:"

// HTTP is the [http] table, used by `serve --http`.
type HTTP struct {
	// Path is the MCP endpoint path. Default "/mcp".
	Path string `toml:"path" json:"path"`
	// SSE serves the HTTP+SSE transport of protocol version 2024-11-05
	// beside Path, on the same listener with the same checks, access
	// control and limits. Default true.
	SSE bool `toml:"sse" json:"sse"`
	// SSEPath is where a client of the HTTP+SSE transport opens its event
	// stream (GET). Default "/sse".
	SSEPath string `toml:"sse_path" json:"sse_path"`
	// MessagesPath is where a client of the HTTP+SSE transport POSTs its
	// messages (?sessionId=…, named by the stream's endpoint event).
	// Default "/messages".
	MessagesPath string `toml:"messages_path" json:"messages_path"`
	// AllowedOrigins are the Origin header values accepted besides
	// same-host origins ("scheme://host[:port]"). Default none.
	AllowedOrigins []string `toml:"allowed_origins" json:"allowed_origins,omitempty"`
	// AllowedHosts are the Host header values accepted besides loopback
	// names ("host" or "host:port"). Default none.
	AllowedHosts []string `toml:"allowed_hosts" json:"allowed_hosts,omitempty"`
	// TrustedProxies are the addresses (an IP or a CIDR prefix) of the
	// reverse proxies in front of the server: a request from one of them
	// is the client's that X-Forwarded-For names (the last address in it
	// that is not a trusted proxy), for the audit trail's source and the
	// limits of anonymous callers. None by default: the TCP peer.
	TrustedProxies []string `toml:"trusted_proxies" json:"trusted_proxies,omitempty"`
	// MaxBody is the largest request body accepted. Default 4MiB.
	MaxBody Size `toml:"max_body" json:"max_body"`
	// MaxHeaderBytes bounds the request line and headers; larger requests
	// get 431. Default 64KiB.
	MaxHeaderBytes Size `toml:"max_header_bytes" json:"max_header_bytes"`
	// ReadHeaderTimeout is how long a client has to send its request
	// headers (slow-header clients are cut off). Default 10s.
	ReadHeaderTimeout Duration `toml:"read_header_timeout" json:"read_header_timeout"`
	// ReadTimeout is how long a client has to send a request body.
	// Default 30s.
	ReadTimeout Duration `toml:"read_timeout" json:"read_timeout"`
	// WriteTimeout bounds each write of a response or SSE event: a client
	// that stops reading loses its stream after that long. Default 30s.
	WriteTimeout Duration `toml:"write_timeout" json:"write_timeout"`
	// IdleTimeout closes a keep-alive connection after that long without
	// a request. Default 2m.
	IdleTimeout Duration `toml:"idle_timeout" json:"idle_timeout"`
	// MaxConns bounds the open connections; further connections get 503
	// and are closed. Default 1024.
	MaxConns int `toml:"max_conns" json:"max_conns"`
	// MaxSessions bounds the legacy sessions (Mcp-Session-Id) alive at
	// once; initialize beyond it gets 503. Default 10000.
	MaxSessions int `toml:"max_sessions" json:"max_sessions"`
	// SessionIdleTimeout ends a legacy session unused for that long.
	// Default 30m.
	SessionIdleTimeout Duration `toml:"session_idle_timeout" json:"session_idle_timeout"`
	// ReplayBuffer bounds the bytes of events each legacy SSE stream keeps
	// for Last-Event-ID replay, and so what a session queues for a client
	// that does not read it (its oldest events go first; list_changed and
	// resources/updated of the same kind or URI wait once at most). Zero
	// means the default, 1MiB.
	ReplayBuffer Size `toml:"replay_buffer" json:"replay_buffer,omitempty"`
}

// Limits is the [limits] table: the defaults for every plugin.
type Limits struct {
	// Memory is the linear-memory limit of each instance. Default 64MiB.
	Memory Size `toml:"memory" json:"memory"`
	// Timeout is the wall-clock deadline of one call. Default 10s.
	Timeout Duration `toml:"timeout" json:"timeout"`
	// MaxOutput is the most bytes one call may output. Default 4MiB.
	MaxOutput Size `toml:"max_output" json:"max_output"`
	// Instances is the pool size per plugin: at most this many calls of
	// one plugin run at once. Default 4.
	Instances int `toml:"instances" json:"instances"`
	// MaxQueue is how many calls may wait for a free instance before
	// further calls are refused: a memory bound; QueueWait is what sheds
	// load. Zero means the runtime's default (64 × Instances).
	MaxQueue int `toml:"max_queue" json:"max_queue"`
	// QueueWait bounds a call's expected wait for one of its plugin's
	// instances (calls ahead ÷ instances × the plugin's recent mean call
	// time): past it the call is refused at once with -32001. Zero means
	// min(timeout, 5s).
	QueueWait Duration `toml:"queue_wait" json:"queue_wait,omitempty"`
	// Idle is how long an instance may stay unused in its plugin's pool
	// before it is closed, so that a plugin nobody calls costs only its
	// compiled code. Zero means the default, 5m.
	Idle Duration `toml:"idle" json:"idle,omitempty"`
	// BackgroundCPUs is how many calls that have run past CPUSlice of
	// guest time may run guest code at once, server-wide; the others are
	// parked and take turns, shared round robin between plugins, so that
	// a runaway plugin cannot slow the others. Zero means
	// max(1, GOMAXPROCS-1); -1 turns the scheduler off. Server-wide only.
	BackgroundCPUs int `toml:"background_cpus" json:"background_cpus,omitempty"`
	// CPUSlice is the guest time a call runs before it becomes a
	// background call. Zero means 5ms. Server-wide only.
	CPUSlice Duration `toml:"cpu_slice" json:"cpu_slice,omitempty"`
	// MaxConcurrent bounds the plugin calls (tools/call, resources/read,
	// prompts/get, completion/complete) running at once across the whole
	// server, and MaxWaiting the calls waiting for one of those slots;
	// further calls are refused with -32001 (HTTP 503 with Retry-After
	// when refused before dispatch). A call waiting in its plugin's queue
	// (MaxQueue) holds no MaxConcurrent slot but still counts against
	// MaxConcurrent + MaxWaiting. Server-wide only: [[plugins]] cannot
	// override them. Zero means the defaults: max(16, 4 × GOMAXPROCS) and
	// max(1024, 4 × MaxConcurrent): waiting calls are shed by time (10 s),
	// and the count only bounds their memory.
	MaxConcurrent int `toml:"max_concurrent" json:"max_concurrent,omitempty"`
	MaxWaiting    int `toml:"max_waiting" json:"max_waiting,omitempty"`
	// PluginConcurrent bounds the MaxConcurrent slots the calls of one
	// plugin hold at once, so that a few plugins whose instances spin
	// cannot take every slot: a call of a plugin at its share waits while
	// calls of other plugins run. Server-wide only. Zero means the
	// default, max(1, MaxConcurrent/2).
	PluginConcurrent int `toml:"plugin_concurrent" json:"plugin_concurrent,omitempty"`
	// PrincipalConcurrent bounds the calls (running and waiting) of one
	// principal: the authenticated caller ([auth] token name or JWT
	// subject), else the legacy session, else the client's address (or
	// the stdio connection). PrincipalRate bounds the calls one principal
	// starts a second, with bursts of PrincipalBurst. Beyond them a call
	// is refused with -32001, on HTTP 429 with Retry-After. Server-wide
	// only. Zero means the defaults: MaxConcurrent + MaxWaiting less an
	// eighth, no rate limit, and max(1, PrincipalRate).
	PrincipalConcurrent int     `toml:"principal_concurrent" json:"principal_concurrent,omitempty"`
	PrincipalRate       float64 `toml:"principal_rate" json:"principal_rate,omitempty"`
	PrincipalBurst      int     `toml:"principal_burst" json:"principal_burst,omitempty"`

	// MaxBatch bounds the messages of one 2025-03-26 JSON-RPC batch, on
	// stdio and HTTP: a longer batch is refused whole with one -32600
	// error (the session goes on). MaxBatchResponse bounds the total size
	// of a batch's responses: past it, the remaining requests are
	// answered with -32600 errors instead. Server-wide only. Zero means
	// the defaults: 100 and 16MiB.
	MaxBatch         int  `toml:"max_batch" json:"max_batch,omitempty"`
	MaxBatchResponse Size `toml:"max_batch_response" json:"max_batch_response,omitempty"`

	// Module limits: what a plugin's module may declare, checked before
	// it is compiled; a module past one is refused at load with an error
	// naming the key. Server-wide only. Zero means the default.
	//
	// MaxTableElements bounds the entries of a module's tables, summed
	// (tables are outside Memory): a module declaring more as its
	// minimum is refused, and table.grow past it returns -1. Default
	// 1048576.
	MaxTableElements int `toml:"max_table_elements" json:"max_table_elements,omitempty"`
	// MaxModuleSize bounds a module's size. Default 32MiB.
	MaxModuleSize Size `toml:"max_module_size" json:"max_module_size,omitempty"`
	// MaxFunctions bounds a module's functions, imported and defined,
	// and its types and its exports, each. Default 100000.
	MaxFunctions int `toml:"max_functions" json:"max_functions,omitempty"`
	// MaxFunctionSize bounds one function body. Default 1MiB.
	MaxFunctionSize Size `toml:"max_function_size" json:"max_function_size,omitempty"`
	// MaxLocals bounds one function's locals, parameters included.
	// Default 50000.
	MaxLocals int `toml:"max_locals" json:"max_locals,omitempty"`
	// MaxNesting bounds the depth of blocks, loops and ifs in one
	// function. Default 2048.
	MaxNesting int `toml:"max_nesting" json:"max_nesting,omitempty"`
	// MaxBrTable bounds the br_table targets of one function, summed.
	// Default 32768.
	MaxBrTable int `toml:"max_br_table" json:"max_br_table,omitempty"`
	// MaxGlobals bounds a module's globals, imported and defined.
	// Default 10000.
	MaxGlobals int `toml:"max_globals" json:"max_globals,omitempty"`
	// MaxSegments bounds a module's data and element segments together.
	// Default 500000.
	MaxSegments int `toml:"max_segments" json:"max_segments,omitempty"`
	// CompileTimeout bounds the compilation of one module; past it the
	// plugin is refused. Default 1m.
	CompileTimeout Duration `toml:"compile_timeout" json:"compile_timeout,omitempty"`

	// MaxManifestItems bounds the tools, resources, resource templates
	// and prompts one plugin's manifest may declare, together, and
	// MaxManifestBytes the manifest's size: a plugin over either is
	// refused at load, naming the limit (a re-describe over either keeps
	// the previous manifest). Server-wide only. Zero means the defaults:
	// 1000 and 1MiB.
	MaxManifestItems int  `toml:"max_manifest_items" json:"max_manifest_items,omitempty"`
	MaxManifestBytes Size `toml:"max_manifest_bytes" json:"max_manifest_bytes,omitempty"`

	// MaxSubscriptions bounds the resource subscriptions of one session
	// (resources/subscribe, or one subscriptions/listen stream), and
	// MaxURI the length of a subscribed URI (and of the URI of
	// resources/read and of a completion's ref); beyond them the request
	// fails with -32602, and a resources/updated for a longer URI is
	// dropped with a log line. NotifyQueue bounds the notifications a
	// stdio client that does not read may have waiting; past it they are
	// dropped with a log line (HTTP sessions are bounded by [http]
	// replay_buffer). Server-wide only. Zero means the defaults: 100,
	// 8KiB and 1MiB.
	MaxSubscriptions int `toml:"max_subscriptions" json:"max_subscriptions,omitempty"`
	// MaxSubscriptionBytes bounds the subscriptions the server keeps in
	// all (every session's and listen stream's URIs and task ids, 64
	// bytes more each); past it subscribing is refused as busy
	// (-32001). Zero means the default: 64MiB.
	MaxSubscriptionBytes Size `toml:"max_subscription_bytes" json:"max_subscription_bytes,omitempty"`
	MaxURI               Size `toml:"max_uri" json:"max_uri,omitempty"`
	NotifyQueue          Size `toml:"notify_queue" json:"notify_queue,omitempty"`

	// Tasks (long tool calls run in the background, docs/tasks.md).
	// TaskTimeout is the deadline of a task's plugin call, instead of
	// Timeout (the memory and output limits stay the plugin's). TaskTTL
	// is how long a task and its result are kept from its creation,
	// whatever its status, and the longest ttl a client may ask for.
	// MaxTasks bounds the live (working or input_required) tasks of the
	// server and MaxTasksPerPrincipal those of one principal (the
	// authenticated caller or legacy session; anonymous 2026-07-28
	// callers share one); beyond them creating a task fails with -32001.
	// Server-wide only. Zero means the defaults: 10m, 1h, 1000 and 100.
	TaskTimeout          Duration `toml:"task_timeout" json:"task_timeout,omitempty"`
	TaskTTL              Duration `toml:"task_ttl" json:"task_ttl,omitempty"`
	MaxTasks             int      `toml:"max_tasks" json:"max_tasks,omitempty"`
	MaxTasksPerPrincipal int      `toml:"max_tasks_per_principal" json:"max_tasks_per_principal,omitempty"`
	// MaxTaskBytes and MaxTaskBytesPerPrincipal bound the bytes kept for
	// tasks (arguments, results, input), live or ended, in the server and
	// for one principal: a task whose arguments do not fit is refused
	// with -32001, and a result that does not fit ends the task failed
	// with an error naming the budget. Server-wide only. Zero means the
	// defaults: 128MiB and 32MiB.
	MaxTaskBytes             Size `toml:"max_task_bytes" json:"max_task_bytes,omitempty"`
	MaxTaskBytesPerPrincipal Size `toml:"max_task_bytes_per_principal" json:"max_task_bytes_per_principal,omitempty"`
	// TaskLease is how long a running task's record vouches for the
	// server running it, renewed every third of it: with a shared task
	// store ([cluster]), a task whose server died or lost the store is
	// seen failed by the other servers once its lease passes, and stops
	// counting against the caps. Server-wide only. Zero means the
	// default: 30s.
	TaskLease Duration `toml:"task_lease" json:"task_lease,omitempty"`
}

// Plugin is one [[plugins]] entry. Zero limit fields inherit from
// [Config.Limits]; see [Config.LimitsFor].
type Plugin struct {
	// Name identifies the plugin in logs and errors; it must match
	// ^[A-Za-z0-9_-]{1,64}$ and be unique. Required.
	Name string `toml:"name" json:"name"`
	// Path is the .wasm file, resolved against the configuration file's
	// directory. Exactly one of Path and URL is required.
	Path string `toml:"path" json:"path"`
	// URL fetches the plugin instead: "oci://HOST[:PORT]/REPO:TAG",
	// "oci://HOST[:PORT]/REPO@sha256:HEX" or "https://HOST/PATH.wasm",
	// into a content-addressed cache under [server] cache_dir.
	URL string `toml:"url" json:"url,omitempty"`
	// Verify, when present, requires a valid cosign signature of the
	// plugin (oci:// URLs only), checked on every load.
	Verify *Verify `toml:"verify" json:"verify,omitempty"`
	// Refresh, when positive and [server] watch is on, re-resolves the
	// URL's tag that often and loads the version it moved to, verified
	// like the first. Zero never re-resolves.
	Refresh Duration `toml:"refresh" json:"refresh,omitempty"`
	// Required makes a URL plugin that cannot be fetched, verified or
	// loaded stop the server from starting; by default such a plugin is
	// reported, retried with backoff, and the others are served.
	Required bool `toml:"required" json:"required,omitempty"`
	// SHA256 optionally pins the file's SHA-256 (64 hex digits, stored in
	// lower case); a mismatch refuses to load the plugin.
	SHA256 string `toml:"sha256" json:"sha256,omitempty"`
	// Prefix is prepended to the plugin's tool and prompt names. Default
	// none.
	Prefix string `toml:"prefix" json:"prefix,omitempty"`
	// Timeout, Memory, MaxOutput, Instances, MaxQueue, QueueWait and Idle
	// override the [limits] of the same name for this plugin; zero
	// inherits them.
	Timeout   Duration `toml:"timeout" json:"timeout,omitempty"`
	Memory    Size     `toml:"memory" json:"memory,omitempty"`
	MaxOutput Size     `toml:"max_output" json:"max_output,omitempty"`
	Instances int      `toml:"instances" json:"instances,omitempty"`
	MaxQueue  int      `toml:"max_queue" json:"max_queue,omitempty"`
	QueueWait Duration `toml:"queue_wait" json:"queue_wait,omitempty"`
	Idle      Duration `toml:"idle" json:"idle,omitempty"`
	// Scopes, when set, restrict the plugin to authenticated HTTP callers
	// whose token carries at least one of these scopes: to everyone else
	// its tools, prompts and resources do not exist (they are neither
	// listed nor callable). Empty means visible to every caller. Needs
	// [auth]; stdio callers always see every plugin.
	Scopes []string `toml:"scopes" json:"scopes,omitempty"`
	// Tools, when set, exposes only the plugin's tools of these names,
	// and Hide none of these: a tool left out is neither listed nor
	// callable. Both use the plugin's own tool names, before Prefix.
	Tools []string `toml:"tools" json:"tools,omitempty"`
	Hide  []string `toml:"hide" json:"hide,omitempty"`
	// Override rewrites what clients see of a tool, keyed by the
	// plugin's own tool name ([plugins.override.NAME]).
	Override map[string]Override `toml:"override" json:"override,omitempty"`
	// Rate, when set ("10/s", "30/m", "100/h"), bounds the calls one
	// principal may start of each of the plugin's tools, shared through
	// Redis in cluster mode; Burst is how many may come at once
	// (default: the rate's count, 10 for "10/s").
	Rate  Rate `toml:"rate" json:"rate,omitzero"`
	Burst int  `toml:"burst" json:"burst,omitempty"`
	// Grants is what the operator allows the plugin; nothing by default.
	Grants Grants `toml:"grants" json:"grants"`
	// Policy is a Wassette policy file (policy.yaml, resolved against the
	// configuration file's directory) read as the plugin's grants
	// instead of a [plugins.grants] table; see docs/components.md.
	Policy string `toml:"policy" json:"policy,omitempty"`
	// Line is the line of the entry's [[plugins]] header in the file that
	// [Parse] read, for errors; 0 when unknown. Not a key of the file.
	Line int `toml:"-" json:"-"`
}

// Override is a [plugins.override.NAME] table: what clients see of the
// plugin's tool NAME instead of what the plugin describes. A Name
// renames the tool (the plugin's prefix is still put before it; calls
// reach the plugin under its own name); a Description replaces its
// description. Both are pinned like any definition.
type Override struct {
	Name        string `toml:"name" json:"name,omitempty"`
	Description string `toml:"description" json:"description,omitempty"`
}

// Verify is a [plugins.verify] table: whose signature a URL plugin must
// carry. Either Key (a cosign public key) or keyless: Identity or
// IdentityRegexp, Issuer and TrustedRoot.
type Verify struct {
	// Key is a cosign public key (PEM), resolved against the
	// configuration file's directory.
	Key string `toml:"key" json:"key,omitempty"`
	// Identity is the exact certificate identity (SAN) of a keyless
	// signature; IdentityRegexp a regular expression it must match.
	Identity       string `toml:"identity" json:"identity,omitempty"`
	IdentityRegexp string `toml:"identity_regexp" json:"identity_regexp,omitempty"`
	// Issuer is the OIDC issuer the keyless certificate must name.
	Issuer string `toml:"issuer" json:"issuer,omitempty"`
	// TrustedRoot is a Sigstore trusted_root.json, resolved against the
	// configuration file's directory; keyless verification is offline
	// against it.
	TrustedRoot string `toml:"trusted_root" json:"trusted_root,omitempty"`
}

// Grants is a [plugins.grants] table. The zero value grants nothing.
type Grants struct {
	// HTTP are the URL prefixes http/fetch may reach
	// ("https://api.example.com/v1/").
	HTTP []string `toml:"http" json:"http,omitempty"`
	// KV allows the plugin's own key-value namespace.
	KV bool `toml:"kv" json:"kv,omitempty"`
	// Env are environment variables visible to the plugin, with their
	// values (use ${NAME} to pass one through from the server's
	// environment).
	Env map[string]string `toml:"env" json:"env,omitempty"`
	// FS are host directories mounted into the plugin.
	FS []Mount `toml:"fs" json:"fs,omitempty"`
	// Config are the values config/get returns, by key.
	Config map[string]string `toml:"config" json:"config,omitempty"`
	// Elicitation, Sampling and Roots allow the corresponding requests to
	// the client.
	Elicitation bool `toml:"elicitation" json:"elicitation,omitempty"`
	Sampling    bool `toml:"sampling" json:"sampling,omitempty"`
	Roots       bool `toml:"roots" json:"roots,omitempty"`
}

// Mount is one directory mount of [Grants.FS].
type Mount struct {
	// Host is the host directory, resolved against the configuration
	// file's directory.
	Host string `toml:"host" json:"host"`
	// Guest is the absolute path the plugin sees.
	Guest string `toml:"guest" json:"guest"`
	// Mode is "ro" (the default) or "rw".
	Mode string `toml:"mode" json:"mode"`
}

// ReadOnly reports whether the mount is read-only.
func (m Mount) ReadOnly() bool { return m.Mode != "rw" }

// Default returns the configuration used when there is no file: the
// defaults documented on each field, no plugins.
func Default() *Config {
	return &Config{
		Server: Server{Name: "wasmcp", LogLevel: "info", ShutdownGrace: Duration(10 * time.Second)},
		HTTP: HTTP{
			Path:               "/mcp",
			SSE:                true,
			SSEPath:            "/sse",
			MessagesPath:       "/messages",
			MaxBody:            4 << 20,
			MaxHeaderBytes:     64 << 10,
			ReadHeaderTimeout:  Duration(10 * time.Second),
			ReadTimeout:        Duration(30 * time.Second),
			WriteTimeout:       Duration(30 * time.Second),
			IdleTimeout:        Duration(2 * time.Minute),
			MaxConns:           1024,
			MaxSessions:        10000,
			SessionIdleTimeout: Duration(30 * time.Minute),
		},
		Auth:  Auth{Leeway: Duration(30 * time.Second)},
		Audit: Audit{MaxSize: 64 << 20, MaxFiles: 5, MaxData: 4 << 10},
		Limits: Limits{
			Memory:    64 << 20,
			Timeout:   Duration(10 * time.Second),
			MaxOutput: 4 << 20,
			Instances: 4,
		},
	}
}

// Load reads, decodes and validates the configuration file at path.
// Relative paths in it are resolved against its directory. Errors do not
// repeat path (beyond what the OS error for reading it says): callers
// prefix it, as cmd/wasmcp does ("config wasmcp.toml: line 3: ...").
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data, filepath.Dir(abs))
	if err != nil {
		return nil, err
	}
	if err := c.ApplyPolicies(); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c.File = abs
	return c, nil
}

// Parse decodes a configuration file's content on top of [Default]. It
// rejects keys the format does not define (naming each with its line),
// expands ${NAME} references, normalises values (an empty fs mode becomes
// "ro", sha256 lower case) and resolves relative paths against dir (left
// relative when dir is empty). It does not call [Config.Validate].
func Parse(data []byte, dir string) (*Config, error) {
	c := Default()
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(c)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("line %d: %s", pe.Position.Line, strings.TrimPrefix(pe.Message, "toml: "))
		}
		return nil, errors.New(strings.TrimPrefix(err.Error(), "toml: "))
	}
	if errs := unknownKeys(data, md); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if errs := locatePlugins(c, data, md); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	locateCluster(c, data)
	if errs := expandStrings(c, os.LookupEnv); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c.normalize(dir)
	return c, nil
}

// unknownKeys returns one error per key of the document that no field
// decoded, skipping keys under an already reported table.
func unknownKeys(data []byte, md toml.MetaData) []error {
	undecoded := md.Undecoded()
	if len(undecoded) == 0 {
		return nil
	}
	set := make(map[string]bool, len(undecoded))
	for _, k := range undecoded {
		set[k.String()] = true
	}
	located := locateKeys(data)
	cursor := 0
	var errs []error
	for _, k := range md.Keys() {
		if !set[k.String()] || underUnknown(k, set) {
			continue
		}
		if line := lineOf(located, &cursor, k); line > 0 {
			errs = append(errs, fmt.Errorf("line %d: unknown key %s", line, quoteKey(k)))
		} else {
			errs = append(errs, fmt.Errorf("unknown key %s", quoteKey(k)))
		}
	}
	return errs
}

// locatePlugins sets the Line of every [[plugins]] entry and refuses a
// memory written as zero: an unset limit is zero, which means the default
// (or, in [[plugins]], the [limits] value), so a written `memory = "0"`
// would silently mean 64MiB.
func locatePlugins(c *Config, data []byte, md toml.MetaData) []error {
	keys := md.Keys()
	headers := 0
	for _, k := range keys {
		if len(k) == 1 && k[0] == "plugins" {
			headers++
		}
	}
	// An array of inline tables (plugins = [{...}, {...}]) has one key
	// for all its entries: no lines then.
	exact := headers == len(c.Plugins)
	located := locateKeys(data)
	cursor := 0
	i := -1
	var errs []error
	at := func(line int, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if line > 0 {
			msg = fmt.Sprintf("line %d: %s", line, msg)
		}
		errs = append(errs, errors.New(msg))
	}
	for _, k := range keys {
		switch {
		case len(k) == 1 && k[0] == "plugins":
			i++
			line := lineOf(located, &cursor, k)
			if exact && i < len(c.Plugins) {
				c.Plugins[i].Line = line
			}
		case equalKeys(k, []string{"limits", "memory"}) && c.Limits.Memory == 0:
			at(lineOf(located, &cursor, k), "limits.memory: 0 is refused; write a size such as %q (the default, also what leaving the key out gives)", Default().Limits.Memory.String())
		case equalKeys(k, []string{"plugins", "memory"}) && exact && i >= 0 && i < len(c.Plugins) && c.Plugins[i].Memory == 0:
			at(lineOf(located, &cursor, k), "plugins[%d] (%q): memory: 0 is refused; write a size, or leave the key out to inherit [limits] memory", i, c.Plugins[i].Name)
		}
	}
	return errs
}

// CheckFiles reports every [[plugins]] entry whose path is not a regular
// file, naming the entry and its line in the file. Validate does not
// check files; `wasmcp serve` and `call` call both.
func (c *Config) CheckFiles() error {
	var errs []error
	for i := range c.Plugins {
		p := &c.Plugins[i]
		if p.Path == "" {
			continue
		}
		msg := fmt.Sprintf("plugins[%d] (%q): path %s", i, p.Name, p.Path)
		if p.Line > 0 {
			msg = fmt.Sprintf("line %d: %s", p.Line, msg)
		}
		fi, err := os.Stat(p.Path)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", msg, errors.Unwrap(err)))
		case !fi.Mode().IsRegular():
			errs = append(errs, fmt.Errorf("%s: not a regular file", msg))
		}
	}
	return errors.Join(errs...)
}

// underUnknown reports whether a proper prefix of k is itself unknown.
func underUnknown(k toml.Key, unknown map[string]bool) bool {
	for i := 1; i < len(k); i++ {
		if unknown[k[:i].String()] {
			return true
		}
	}
	return false
}

func quoteKey(k toml.Key) string {
	s := k.String()
	if strings.Contains(s, `"`) {
		return s
	}
	return `"` + s + `"`
}

// normalize fills implied values and resolves relative paths.
func (c *Config) normalize(dir string) {
	resolve := func(p string) string {
		if p == "" || dir == "" || filepath.IsAbs(p) || strings.Contains(p, "://") {
			return p
		}
		return filepath.Join(dir, p)
	}
	for i, d := range c.Server.PluginDirs {
		c.Server.PluginDirs[i] = resolve(d)
	}
	c.Server.CacheDir = resolve(c.Server.CacheDir)
	for i := range c.Skills {
		c.Skills[i].Dir = resolve(c.Skills[i].Dir)
	}
	c.Auth.JWKSFile = resolve(c.Auth.JWKSFile)
	c.Authz.Policies = resolve(c.Authz.Policies)
	c.Authz.Entities = resolve(c.Authz.Entities)
	if !c.Audit.Stderr() {
		c.Audit.File = resolve(c.Audit.File)
	}
	if c.Auth.Mode == "" {
		c.Auth.Mode = c.Auth.inferMode()
	}
	if c.Server.KVDir != MemoryKV {
		c.Server.KVDir = resolve(c.Server.KVDir)
	}
	for i := range c.Plugins {
		p := &c.Plugins[i]
		p.Path = resolve(p.Path)
		p.Policy = resolve(p.Policy)
		if p.Verify != nil {
			p.Verify.Key = resolve(p.Verify.Key)
			p.Verify.TrustedRoot = resolve(p.Verify.TrustedRoot)
		}
		p.SHA256 = strings.ToLower(p.SHA256)
		for j := range p.Grants.FS {
			m := &p.Grants.FS[j]
			m.Host = resolve(m.Host)
			if m.Mode == "" {
				m.Mode = "ro"
			}
		}
	}
}

// LimitsFor returns the limits of plugin p: its own non-zero overrides on
// top of c.Limits.
func (c *Config) LimitsFor(p *Plugin) Limits {
	l := c.Limits
	if p.Memory != 0 {
		l.Memory = p.Memory
	}
	if p.Timeout != 0 {
		l.Timeout = p.Timeout
	}
	if p.MaxOutput != 0 {
		l.MaxOutput = p.MaxOutput
	}
	if p.Instances != 0 {
		l.Instances = p.Instances
	}
	if p.MaxQueue != 0 {
		l.MaxQueue = p.MaxQueue
	}
	if p.QueueWait != 0 {
		l.QueueWait = p.QueueWait
	}
	if p.Idle != 0 {
		l.Idle = p.Idle
	}
	return l
}

// Plugin returns the [[plugins]] entry named name, or nil.
func (c *Config) Plugin(name string) *Plugin {
	for i := range c.Plugins {
		if c.Plugins[i].Name == name {
			return &c.Plugins[i]
		}
	}
	return nil
}
