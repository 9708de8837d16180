package telemetry

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// methods are the MCP methods the histogram names; any other method is
// "other", so that a client cannot make up series.
var methods = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true, "resources/list": true, "resources/templates/list": true,
	"resources/read": true, "resources/subscribe": true, "resources/unsubscribe": true, "prompts/list": true,
	"prompts/get": true, "completion/complete": true, "logging/setLevel": true, "server/discover": true,
	"subscriptions/listen": true,
}

// MaxPluginSeries bounds the operation histogram's series one plugin's
// tools/call requests may hold: one per (tool, error type) pair. Past it,
// and for a tool the plugin no longer serves, a call is recorded under the
// tool name OtherTool and counted in wasmcp_metrics_folded_total, so that
// a plugin that renames its tools on every call (notify/list_changed)
// cannot grow /metrics (each series is 17 lines) for the process's life.
// The series of tools a plugin no longer serves are dropped when the
// server reports its tools (Telemetry.SetTools).
const MaxPluginSeries = 128

// OtherTool is the gen_ai_tool_name of the calls folded past
// MaxPluginSeries or of a tool no longer served.
const OtherTool = "_OTHER"

// metrics are the Prometheus series of one Telemetry, in a registry of
// their own.
type metrics struct {
	reg        *prometheus.Registry
	opDuration *prometheus.HistogramVec
	calls      *prometheus.CounterVec
	queueWait  *prometheus.CounterVec
	queued     *prometheus.CounterVec
	runTime    *prometheus.CounterVec
	hostCalls  *prometheus.CounterVec
	denials    *prometheus.CounterVec
	httpReqs   *prometheus.CounterVec
	httpBytes  *prometheus.CounterVec
	// deniedFolded counts the denial records DenialLog folded.
	deniedFolded prometheus.Counter
	// folded counts, by plugin, the calls recorded under OtherTool.
	folded *prometheus.CounterVec
	// onFold is called the first time a plugin's calls fold (a log line).
	onFold func(plugin string)

	// The series bound once, so that a call hashes no label values: per
	// plugin, and of the histogram per method, tool and error type.
	plugins cache[string, *pluginSeries]
	ops     cache[opKey, prometheus.Observer] // the series without a tool

	// toolMu guards tools and told, and serializes the series' deletion
	// with their creation (a cache miss).
	toolMu sync.Mutex
	tools  map[string]*toolSeries // by plugin
	told   bool                   // SetTools was called: plugins not in it are gone
}

// toolSeries are the tool-labelled histogram series of one plugin.
type toolSeries struct {
	known  map[string]bool  // the tools it serves (SetTools); nil: never told
	used   map[toolKey]bool // the series it holds, at most MaxPluginSeries
	warned bool             // onFold was called
}

type toolKey struct{ tool, errType string }

type pluginSeries struct {
	queueWait, queued, runTime, hostCalls, httpReqs, httpSent, httpRecv prometheus.Counter
	ok                                                                  prometheus.Counter // the outcomes' most common
	outcomes                                                            cache[string, prometheus.Counter]
	// okTools are the histogram's series of the plugin's tools/call
	// requests that succeeded, by tool: the common case, one lookup;
	// errTools those that failed, by tool and error type. Folded calls
	// are not cached (their names are the plugin's to make up).
	okTools  cache[string, prometheus.Observer]
	errTools cache[toolKey, prometheus.Observer]
}

// cache is a map read without a lock or an interface key (sync.Map
// hashes its keys through their type): each miss stores a copy with the
// new entry. Its keys are few, and none is the client's: the plugins,
// their tools, the outcomes and error types.
type cache[K comparable, V any] struct {
	m  atomic.Pointer[map[K]V]
	mu sync.Mutex // a miss
}

// get returns the value of k, made by mk on the first get of k.
func (c *cache[K, V]) get(k K, mk func() V) V {
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var old map[K]V
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
		old = *m
	}
	m := make(map[K]V, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	v := mk()
	m[k] = v
	c.m.Store(&m)
	return v
}

// lookup returns the value of k, if there is one.
func (c *cache[K, V]) lookup(k K) (V, bool) {
	if m := c.m.Load(); m != nil {
		v, ok := (*m)[k]
		return v, ok
	}
	var zero V
	return zero, false
}

// keys returns the keys, in no order.
func (c *cache[K, V]) keys() []K {
	var ks []K
	if m := c.m.Load(); m != nil {
		for k := range *m {
			ks = append(ks, k)
		}
	}
	return ks
}

// drop removes the entries whose keys gone reports.
func (c *cache[K, V]) drop(gone func(K) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old == nil {
		return
	}
	m := make(map[K]V, len(*old))
	for k, v := range *old {
		if !gone(k) {
			m[k] = v
		}
	}
	c.m.Store(&m)
}

type opKey struct{ method, tool, errType string }

func newMetrics(stats func() []PluginStats) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.opDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcp_server_operation_duration_seconds",
		Help:    "MCP request duration as seen by the server (OpenTelemetry mcp.server.operation.duration).",
		Buckets: []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300},
	}, []string{"mcp_method_name", "gen_ai_tool_name", "error_type"})
	// counter is a counter vector by plugin, then by labels.
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append([]string{"plugin"}, labels...))
	}
	m.calls = counter("wasmcp_plugin_calls_total",
		"MCP requests served by a plugin, by outcome (ok, tool_error, timeout, trap, memory, output_cap, busy, denied, cancelled, error).", "outcome")
	m.queueWait = counter("wasmcp_plugin_queue_wait_seconds_total",
		"Time calls waited for a free instance of the plugin.")
	m.queued = counter("wasmcp_plugin_queued_calls_total",
		"Calls that had to wait for a free instance of the plugin.")
	m.runTime = counter("wasmcp_plugin_run_seconds_total",
		"Wall time of the plugin's calls once they had an instance (instantiation, guest code and host calls).")
	m.hostCalls = counter("wasmcp_plugin_host_calls_total",
		"Host calls (the call import) the plugin made.")
	m.denials = counter("wasmcp_plugin_denials_total",
		"Capabilities the plugin asked for and its grants refused, by kind (the host method, or input_request).", "kind")
	m.httpReqs = counter("wasmcp_plugin_http_requests_total",
		"http/fetch calls the plugin made.")
	m.httpBytes = counter("wasmcp_plugin_http_bytes_total",
		"Bytes of the plugin's http/fetch calls as the plugin sent and received them (JSON, body included).", "direction")
	m.deniedFolded = prometheus.NewCounter(prometheus.CounterOpts{Name: "wasmcp_audit_denials_folded_total",
		Help: "Capability denial records not written one by one (rate-limited per plugin and capability) but folded into a \"capability denials folded\" record."})
	m.folded = counter("wasmcp_metrics_folded_total",
		"tools/call requests of the plugin recorded under gen_ai_tool_name=\""+OtherTool+"\": past its "+strconv.Itoa(MaxPluginSeries)+" histogram series, or of a tool it no longer serves.")
	m.tools = map[string]*toolSeries{}
	m.reg.MustRegister(m.opDuration, m.calls, m.queueWait, m.queued, m.runTime, m.hostCalls, m.denials, m.httpReqs, m.httpBytes, m.deniedFolded, m.folded,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if stats != nil {
		m.reg.MustRegister(&poolCollector{stats: stats})
	}
	return m
}

// series returns the per-plugin counters of name.
func (m *metrics) series(name string) *pluginSeries {
	return m.plugins.get(name, func() *pluginSeries {
		return &pluginSeries{
			queueWait: m.queueWait.WithLabelValues(name), queued: m.queued.WithLabelValues(name),
			runTime: m.runTime.WithLabelValues(name), hostCalls: m.hostCalls.WithLabelValues(name),
			httpReqs: m.httpReqs.WithLabelValues(name), httpSent: m.httpBytes.WithLabelValues(name, "sent"),
			httpRecv: m.httpBytes.WithLabelValues(name, "received"), ok: m.calls.WithLabelValues(name, OutcomeOK),
		}
	})
}

func (m *metrics) operation(method, tool, errType string, d time.Duration) {
	if !methods[method] {
		method = "other"
	}
	o := m.ops.get(opKey{method, tool, errType}, func() prometheus.Observer {
		return m.opDuration.WithLabelValues(method, tool, errType)
	})
	o.Observe(d.Seconds())
}

// call records request st, which a plugin served with outcome: its
// operation duration d (errType as for operation) and its plugin's
// series.
func (m *metrics) call(st *reqState, method, outcome, errType string, d time.Duration) {
	s := m.series(st.plugin)
	switch {
	case method == "tools/call" && errType == "":
		if o, ok := s.okTools.lookup(st.target); ok {
			o.Observe(d.Seconds())
		} else {
			m.toolObserver(s, st.plugin, toolKey{st.target, ""}).Observe(d.Seconds())
		}
	case method == "tools/call": // known tools only: a client cannot make up series
		k := toolKey{st.target, errType}
		if o, ok := s.errTools.lookup(k); ok {
			o.Observe(d.Seconds())
		} else {
			m.toolObserver(s, st.plugin, k).Observe(d.Seconds())
		}
	default:
		m.operation(method, "", errType, d)
	}
	if outcome == OutcomeOK {
		s.ok.Inc()
	} else {
		s.outcomes.get(outcome, func() prometheus.Counter { return m.calls.WithLabelValues(st.plugin, outcome) }).Inc()
	}
	if st.queued {
		s.queued.Inc()
		s.queueWait.Add(st.queueWait.Seconds())
	}
	s.runTime.Add(st.runTime.Seconds())
	if st.hostCalls > 0 {
		s.hostCalls.Add(float64(st.hostCalls))
	}
	if st.httpReqs > 0 {
		s.httpReqs.Add(float64(st.httpReqs))
		s.httpSent.Add(float64(st.httpSent))
		s.httpRecv.Add(float64(st.httpRecv))
	}
}

// toolObserver returns the histogram series of plugin's tools/call
// requests of k (a cache miss of s): k's own series while the plugin
// serves the tool and holds fewer than MaxPluginSeries, else the
// OtherTool series of k's error type, counted as folded.
func (m *metrics) toolObserver(s *pluginSeries, plugin string, k toolKey) prometheus.Observer {
	m.toolMu.Lock()
	defer m.toolMu.Unlock()
	ts := m.tools[plugin]
	if ts == nil {
		ts = &toolSeries{used: map[toolKey]bool{}}
		m.tools[plugin] = ts
	}
	if !ts.used[k] {
		if (ts.known == nil && m.told) || (ts.known != nil && !ts.known[k.tool]) || len(ts.used) >= MaxPluginSeries {
			m.folded.WithLabelValues(plugin).Inc()
			if !ts.warned && m.onFold != nil {
				ts.warned = true
				m.onFold(plugin)
			}
			return m.opDuration.WithLabelValues("tools/call", OtherTool, k.errType)
		}
		ts.used[k] = true
	}
	o := m.opDuration.WithLabelValues("tools/call", k.tool, k.errType)
	if k.errType == "" {
		s.okTools.get(k.tool, func() prometheus.Observer { return o })
	} else {
		s.errTools.get(k, func() prometheus.Observer { return o })
	}
	return o
}

// setTools makes the tool-labelled series match the tools each plugin
// now serves (tools, by plugin): the series of tools no longer served are
// dropped, and every series of the plugins not in tools.
func (m *metrics) setTools(tools map[string][]string) {
	m.toolMu.Lock()
	defer m.toolMu.Unlock()
	m.told = true
	had := map[toolKey]bool{} // the tool series before, then those no plugin keeps
	for _, ts := range m.tools {
		for k := range ts.used {
			had[k] = true
		}
	}
	next := make(map[string]*toolSeries, len(tools))
	for plugin, names := range tools {
		ts := m.tools[plugin]
		if ts == nil {
			ts = &toolSeries{used: map[toolKey]bool{}}
		}
		ts.known = make(map[string]bool, len(names))
		for _, n := range names {
			ts.known[n] = true
		}
		for k := range ts.used {
			if !ts.known[k.tool] {
				delete(ts.used, k)
			}
		}
		next[plugin] = ts
		if s, ok := m.plugins.lookup(plugin); ok {
			gone := func(tool string) bool { return !ts.known[tool] }
			s.okTools.drop(gone)
			s.errTools.drop(func(k toolKey) bool { return gone(k.tool) })
		}
	}
	for _, plugin := range m.plugins.keys() { // loaded no more
		if next[plugin] == nil {
			m.dropPlugin(plugin)
		}
	}
	m.tools = next
	for _, ts := range next {
		for k := range ts.used {
			delete(had, k)
		}
	}
	for k := range had {
		m.opDuration.DeleteLabelValues("tools/call", k.tool, k.errType)
	}
}

// dropPlugin deletes every series labelled with plugin.
func (m *metrics) dropPlugin(plugin string) {
	l := prometheus.Labels{"plugin": plugin}
	for _, v := range []*prometheus.CounterVec{m.calls, m.queueWait, m.queued, m.runTime, m.hostCalls, m.denials, m.httpReqs, m.httpBytes, m.folded} {
		v.DeletePartialMatch(l)
	}
	m.plugins.drop(func(p string) bool { return p == plugin })
}

func (m *metrics) denial(plugin, kind string) { m.denials.WithLabelValues(plugin, kind).Inc() }

// SetTools tells the metrics which tools each loaded plugin serves now
// (by plugin name, the names clients call): the histogram series of tools
// no longer served and every series of plugins not in tools are dropped,
// and a later call of a tool not in it is recorded under OtherTool. The
// server calls it whenever its tool list changes (load, reload, unload, a
// plugin's re-describe). Until the first call every tool a plugin's calls
// name gets series, up to MaxPluginSeries per plugin.
func (t *Telemetry) SetTools(tools map[string][]string) {
	if t != nil && t.metrics != nil {
		t.metrics.setTools(tools)
	}
}

// MetricsHandler serves the Prometheus text format of t's metrics; 404
// when metrics are off.
func (t *Telemetry) MetricsHandler() http.Handler {
	if t == nil || t.metrics == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(t.metrics.reg, promhttp.HandlerOpts{})
}

// poolCollector reports the live plugins' instance pools at each scrape.
type poolCollector struct{ stats func() []PluginStats }

var (
	descInstances = prometheus.NewDesc("wasmcp_plugin_instances", "Live instances of the plugin: idle (pooled) or busy (running a call).", []string{"plugin", "state"}, nil)
	descQueue     = prometheus.NewDesc("wasmcp_plugin_queue_depth", "Calls waiting for a free instance of the plugin.", []string{"plugin"}, nil)
	descCreated   = prometheus.NewDesc("wasmcp_plugin_instances_created_total", "Instances of the plugin created.", []string{"plugin"}, nil)
	descClosed    = prometheus.NewDesc("wasmcp_plugin_instances_closed_total", "Instances of the plugin closed, by reason: discarded (after a failure), recycled (memory grown), expired (idle).", []string{"plugin", "reason"}, nil)
	descGuestCPU  = prometheus.NewDesc("wasmcp_plugin_guest_cpu_seconds_total", "Guest code time of the plugin's calls, as the CPU scheduler credits it.", []string{"plugin"}, nil)
	descMemory    = prometheus.NewDesc("wasmcp_plugin_memory_bytes", "Linear memory of the plugin's live instances.", []string{"plugin"}, nil)
	descCompile   = prometheus.NewDesc("wasmcp_plugin_compile_seconds", "How long compiling the plugin's module took (instrumentation and the compilation cache included).", []string{"plugin"}, nil)
	descCacheHit  = prometheus.NewDesc("wasmcp_plugin_compile_cache_hit", "1 when the plugin's module was compiled from the compilation cache (its native code was there), 0 when it was compiled anew.", []string{"plugin"}, nil)
)

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descInstances
	ch <- descQueue
	ch <- descCreated
	ch <- descClosed
	ch <- descGuestCPU
	ch <- descMemory
	ch <- descCompile
	ch <- descCacheHit
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.stats() {
		ch <- prometheus.MustNewConstMetric(descInstances, prometheus.GaugeValue, float64(p.Idle), p.Name, "idle")
		ch <- prometheus.MustNewConstMetric(descInstances, prometheus.GaugeValue, float64(p.Busy), p.Name, "busy")
		ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, float64(p.Waiting), p.Name)
		ch <- prometheus.MustNewConstMetric(descCreated, prometheus.CounterValue, float64(p.Created), p.Name)
		ch <- prometheus.MustNewConstMetric(descClosed, prometheus.CounterValue, float64(p.Discarded), p.Name, "discarded")
		ch <- prometheus.MustNewConstMetric(descClosed, prometheus.CounterValue, float64(p.Recycled), p.Name, "recycled")
		ch <- prometheus.MustNewConstMetric(descClosed, prometheus.CounterValue, float64(p.Expired), p.Name, "expired")
		ch <- prometheus.MustNewConstMetric(descGuestCPU, prometheus.CounterValue, p.GuestCPU.Seconds(), p.Name)
		ch <- prometheus.MustNewConstMetric(descMemory, prometheus.GaugeValue, float64(p.Memory), p.Name)
		ch <- prometheus.MustNewConstMetric(descCompile, prometheus.GaugeValue, p.Compile.Seconds(), p.Name)
		hit := 0.0
		if p.CompileCached {
			hit = 1
		}
		ch <- prometheus.MustNewConstMetric(descCacheHit, prometheus.GaugeValue, hit, p.Name)
	}
}
