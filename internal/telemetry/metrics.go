package telemetry

import (
	"net/http"
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

	// The series bound once, so that a call hashes no label values: per
	// plugin, and of the histogram per method, tool and error type.
	plugins cache[string, *pluginSeries]
	ops     cache[opKey, prometheus.Observer]
}

type pluginSeries struct {
	queueWait, queued, runTime, hostCalls, httpReqs, httpSent, httpRecv prometheus.Counter
	ok                                                                  prometheus.Counter // the outcomes' most common
	outcomes                                                            cache[string, prometheus.Counter]
	// okTools are the histogram's series of the plugin's tools/call
	// requests that succeeded, by tool: the common case, one lookup.
	okTools cache[string, prometheus.Observer]
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
	m.reg.MustRegister(m.opDuration, m.calls, m.queueWait, m.queued, m.runTime, m.hostCalls, m.denials, m.httpReqs, m.httpBytes, m.deniedFolded,
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
		tool := st.target
		s.okTools.get(tool, func() prometheus.Observer { return m.opDuration.WithLabelValues(method, tool, "") }).Observe(d.Seconds())
	case method == "tools/call":
		m.operation(method, st.target, errType, d) // known tools only: a client cannot make up series
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

func (m *metrics) denial(plugin, kind string) { m.denials.WithLabelValues(plugin, kind).Inc() }

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
