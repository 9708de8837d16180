package server

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/internal/audit"
	"github.com/wasmcp/wasmcp/internal/auth"
	"github.com/wasmcp/wasmcp/internal/cluster"
	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/tasks"
	"github.com/wasmcp/wasmcp/internal/telemetry"
	"github.com/wasmcp/wasmcp/plugins"
	"github.com/wasmcp/wasmcp/runtime"
)

// Options configures New besides the configuration file.
type Options struct {
	// Version is the wasmcp version, reported as serverInfo.version when
	// the configuration names none.
	Version string
	// Logger receives every log line (the caller points it at stderr);
	// nil discards.
	Logger *slog.Logger
	// WatchInterval is the polling interval of [server] watch (default 1s).
	WatchInterval time.Duration
	// HTTP bounds every plugin's http/fetch; zero fields are the defaults
	// documented on hostapi.HTTPPolicy. Tests set its Resolver and
	// DialContext to make names resolve to chosen addresses without
	// touching the network.
	HTTP hostapi.HTTPPolicy
	// KVQuota bounds each plugin's kv namespace; zero fields are the
	// defaults documented on hostapi.KVQuota.
	KVQuota hostapi.KVQuota
	// LoadWait is how long New waits for every plugin to load (default
	// 30s). Plugins still loading then keep loading in the background
	// and are served, with list_changed, as each is ready; see
	// Server.Loading.
	LoadWait time.Duration
	// RootCAs are the roots trusted when fetching url plugins over HTTPS;
	// nil means the system roots (SSL_CERT_FILE is honoured).
	RootCAs *x509.CertPool
	// Progress, when set, receives progress lines of url plugin downloads
	// that take more than a second (cmd/wasmcp passes stderr).
	Progress io.Writer
	// RetryTick is how often failed url plugins are checked for a retry
	// (their backoff starts at 1s); default 1s.
	RetryTick time.Duration
	// Background makes New return as soon as the plugins have started
	// loading, so that a transport can answer initialize at once (wasmcp
	// serve). The lists (tools/list, prompts/list, resources/list,
	// resources/templates/list) and the calls then wait until every plugin
	// is listed (from the manifest it described at an earlier start, kept
	// in the compilation cache, or loaded) or has failed, at most
	// LoadWait from New (a call to a plugin listed from its cached
	// manifest waits for it to load); the plugins still
	// loading after that are served, with list_changed, as each is ready.
	// The failures of plugins that must load arrive on StartErr instead of
	// being returned by New. url plugins resolve in the background too:
	// no registry or HTTPS source holds up the local plugins; each is
	// served, with list_changed, once fetched and loaded, and StartErr
	// waits for the required ones.
	Background bool

	// lock, when set, is the lock the url plugins load by instead of
	// wasmcp.lock (Lock describes what it is about to write).
	lock *config.Lock
}

// shutdownFlush bounds the export of the last spans in Close.
const shutdownFlush = 5 * time.Second

// defaultTaskTimeout is [limits] task_timeout's default (mcp.Options has
// the same).
const defaultTaskTimeout = 10 * time.Minute

// defaultLoadWait is the default of Options.LoadWait (a variable for the
// tests, which wait longer).
var defaultLoadWait = 30 * time.Second

// Server is a configured wasmcp: plugins loaded and the MCP engine ready
// to serve them on any number of transports.
type Server struct {
	cfg    *config.Config
	log    *slog.Logger
	engine *runtime.Engine
	kv     *hostapi.KVStore // the process's own store; nil with [cluster]
	clu    *cluster.Cluster // nil without [cluster]
	reg    *plugins.Registry
	mcp    *mcp.Server
	tel    *telemetry.Telemetry // nil: telemetry off
	denied *telemetry.DenialLog // the audit of capability denials (tel's when it is on)
	auth   *auth.Authenticator  // HTTP access control; nil when [auth] is off
	az     *authorizer          // the [authz] policies; nil when off
	aud    *audit.Logger        // the [audit] trail; nil when off
	pin    *pinner              // [server] pin against wasmcp.lock; nil when off
	stop   context.CancelFunc
	done   chan struct{}
	// stopLoad cancels the plugin load started by New; loaded is closed
	// when it has returned.
	stopLoad context.CancelFunc
	loaded   chan struct{}
	// gate holds the lists and calls until the first load is done or
	// LoadWait has passed (Options.Background); startErr receives that
	// load's fatal failures (nil for none), once.
	gate     *startGate
	startErr chan error
	// src resolves the url plugins; nil when there are none.
	src *urlSources
	// With Options.Background the url plugins resolve behind the local
	// ones (resolveLate): urlErr receives the failures of required ones,
	// stopResolve cancels the resolution and resolving is closed when it
	// has returned.
	urlErr      chan error
	stopResolve context.CancelFunc
	resolving   chan struct{}
	// progress receives Options.Progress lines; nil for none.
	progress io.Writer
}

// New builds a Server from cfg and loads its plugins, in parallel, waiting
// for them at most Options.LoadWait: the plugins ready by then are served
// and the rest keep loading in the background, each served (with
// list_changed) as soon as it is ready, so that one slow plugin does not
// keep the others from serving. Plugins named in [[plugins]] must load: a
// failure known within the wait is returned (and nothing is left
// running); a later one is logged. Files found in plugin directories that
// fail to load are logged and skipped, so one bad file dropped in a
// directory does not stop the server.
func New(ctx context.Context, cfg *config.Config, opts Options) (_ *Server, err error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// s is not the named result: every "return nil, err" below would
	// otherwise nil it before the cleanup runs.
	s := &Server{cfg: cfg, log: log, progress: opts.Progress, startErr: make(chan error, 1)}
	if opts.Background {
		s.gate = newStartGate()
	}
	defer func() {
		if err != nil {
			s.Close(context.WithoutCancel(ctx))
		}
	}()
	s.engine, err = runtime.NewEngine(ctx, runtime.Config{CacheDir: cfg.Server.CacheDir, Logger: log,
		BackgroundCPUs: cfg.Limits.BackgroundCPUs, CPUSlice: time.Duration(cfg.Limits.CPUSlice),
		Modules: moduleLimits(cfg.Limits), ExtismUser: plugins.ExtismUserFunctions()})
	if err != nil {
		return nil, fmt.Errorf("wasm engine: %w", err)
	}
	var kv hostapi.KV
	var stateKey []byte
	if cfg.Cluster != nil {
		s.clu, err = cluster.Open(ctx, cluster.Options{URL: string(cfg.Cluster.Redis), Key: string(cfg.Cluster.Key), Logger: log})
		if err != nil {
			return nil, err
		}
		kv = s.clu.KV(opts.KVQuota)
		stateKey = s.clu.Key("requestState")
	} else {
		s.kv, err = hostapi.OpenKV(kvDir(cfg.Server.KVDir), opts.KVQuota)
		if err != nil {
			return nil, fmt.Errorf("kv store: %w", err)
		}
		kv = s.kv
	}
	version := cfg.Server.Version
	if version == "" {
		version = opts.Version
	}
	if s.aud, err = openAudit(&cfg.Audit); err != nil {
		return nil, err
	}
	s.tel, err = telemetry.New(ctx, s.telemetryConfig(version))
	if err != nil {
		return nil, err
	}
	if s.denied = s.tel.DenialLog(); s.denied == nil {
		s.denied = telemetry.NewDenialLog(log)
	}
	if s.aud != nil {
		s.denied.OnDenial(s.auditDenial)
	}
	if s.tel.Tracing() {
		opts.HTTP.WrapTransport = s.tel.WrapTransport
	}
	s.reg, err = plugins.NewRegistry(plugins.Options{
		Engine:   s.engine,
		KV:       kv,
		StateKey: stateKey,
		HTTP:     opts.HTTP,
		Logger:   log,
		Manifest: plugins.ManifestLimits{
			MaxItems: cfg.Limits.MaxManifestItems,
			MaxBytes: int(cfg.Limits.MaxManifestBytes),
		},
		OnListChanged: func(kind string) {
			// Decide the new definitions before clients are told.
			s.pin.refresh()
			s.toolMetrics()
			// Behind a closed start gate no list has been answered yet,
			// so no client holds one to refresh.
			if s.mcp != nil && (s.gate == nil || s.gate.ready.Load()) {
				s.mcp.NotifyListChanged(kind)
			}
		},
		OnResourceUpdated: func(uri string) {
			if s.mcp != nil {
				s.mcp.NotifyResourceUpdated(uri)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	s.az, err = newAuthorizer(cfg, log, s.denied, s.reg)
	if err != nil {
		return nil, err
	}
	s.pin, err = newPinner(cfg, s.reg, log)
	if err != nil {
		return nil, err
	}
	if s.pin != nil {
		s.pin.onFinding = s.auditDefinitionChanged
		// What is withheld may have changed with the lock: every list.
		s.pin.onReload = func() {
			if s.mcp != nil && (s.gate == nil || s.gate.ready.Load()) {
				for _, k := range []string{"tools", "prompts", "resources"} {
					s.mcp.NotifyListChanged(k)
				}
			}
		}
	}
	s.auth, err = newAuthenticator(cfg, log)
	if err != nil {
		return nil, err
	}
	var bus mcp.Bus
	var sessions mcp.SessionStore
	var sessionKey []byte
	var taskStore tasks.Store
	var taskNotifier tasks.Notifier
	var rates mcp.RateStore
	if s.clu != nil {
		rates = s.clu.Rates()
		bus, sessions, sessionKey = s.clu.Bus(), s.clu.Sessions(), s.clu.Key("session")
		lim := mcp.TaskLimits(mcp.Options{MaxTasks: cfg.Limits.MaxTasks, MaxTasksPerPrincipal: cfg.Limits.MaxTasksPerPrincipal,
			MaxTaskBytes: int64(cfg.Limits.MaxTaskBytes), MaxTaskBytesPerPrincipal: int64(cfg.Limits.MaxTaskBytesPerPrincipal)})
		taskStore, taskNotifier = s.clu.Tasks(lim), s.clu.TaskNotifier(lim)
	}
	taskTimeout := time.Duration(cfg.Limits.TaskTimeout)
	if taskTimeout <= 0 {
		taskTimeout = defaultTaskTimeout
	}
	sks, err := newSkillSource(cfg.Skills, s.reg, log)
	if err != nil {
		return nil, errSkillDirs(err)
	}
	s.mcp = mcp.NewServer(&provider{reg: s.reg, log: log, tel: s.tel, denied: s.denied, taskTimeout: taskTimeout, gate: s.gate, skills: sks, az: s.az, pin: s.pin}, &mcp.Options{
		Bus:                      bus,
		Sessions:                 sessions,
		SessionKey:               sessionKey,
		TaskStore:                taskStore,
		TaskNotifier:             taskNotifier,
		Observer:                 s.observer(),
		Name:                     cfg.Server.Name,
		Version:                  version,
		Instructions:             cfg.Server.Instructions,
		Logger:                   log,
		MaxConcurrentCalls:       cfg.Limits.MaxConcurrent,
		MaxWaitingCalls:          cfg.Limits.MaxWaiting,
		CallWaitTimeout:          time.Duration(cfg.Limits.Timeout),
		MaxCallsPerShare:         cfg.Limits.PluginConcurrent,
		PrincipalConcurrent:      cfg.Limits.PrincipalConcurrent,
		PrincipalRate:            cfg.Limits.PrincipalRate,
		PrincipalBurst:           cfg.Limits.PrincipalBurst,
		MaxBatch:                 cfg.Limits.MaxBatch,
		MaxBatchBytes:            int(cfg.Limits.MaxBatchResponse),
		MaxSubscriptions:         cfg.Limits.MaxSubscriptions,
		MaxSubscriptionBytes:     int64(cfg.Limits.MaxSubscriptionBytes),
		MaxURIBytes:              int(cfg.Limits.MaxURI),
		NotifyQueueBytes:         int(cfg.Limits.NotifyQueue),
		TaskTimeout:              taskTimeout,
		TaskTTL:                  time.Duration(cfg.Limits.TaskTTL),
		MaxTasks:                 cfg.Limits.MaxTasks,
		MaxTasksPerPrincipal:     cfg.Limits.MaxTasksPerPrincipal,
		MaxTaskBytes:             int64(cfg.Limits.MaxTaskBytes),
		MaxTaskBytesPerPrincipal: int64(cfg.Limits.MaxTaskBytesPerPrincipal),
		TaskLease:                time.Duration(cfg.Limits.TaskLease),
		ToolRate:                 s.toolRate,
		Rates:                    rates,
	})
	s.src, err = newURLSources(cfg, log, opts.RootCAs, opts.Progress, opts.lock)
	if err != nil {
		return nil, err
	}
	if s.src != nil && !opts.Background {
		wait := opts.LoadWait
		if wait <= 0 {
			wait = defaultLoadWait
		}
		if err := s.src.resolveAll(ctx, wait, nil); err != nil {
			return nil, err
		}
	}
	specs, err := specsWith(cfg, s.src)
	if err != nil {
		return nil, err
	}
	if s.src != nil && opts.Background {
		s.urlErr = make(chan error, 1)
	}
	if err := s.load(ctx, specs, opts.LoadWait); err != nil {
		return nil, err
	}
	if s.urlErr != nil {
		rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		s.stopResolve, s.resolving = stop, make(chan struct{})
		go func() {
			defer close(s.resolving)
			s.urlErr <- s.resolveLate(rctx)
		}()
	}
	watchCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop, s.done = stop, make(chan struct{})
	var bg sync.WaitGroup
	if cfg.Server.Watch {
		bg.Go(func() {
			sks.watch(watchCtx, opts.WatchInterval, func() { s.mcp.NotifyListChanged("resources") })
		})
		bg.Go(func() {
			s.reg.Watch(watchCtx, opts.WatchInterval, func() ([]plugins.Spec, error) { return specsWith(cfg, s.src) })
		})
		if s.az != nil {
			bg.Go(func() { s.az.watch(watchCtx, opts.WatchInterval) })
		}
		if s.pin != nil {
			bg.Go(func() { s.pin.watch(watchCtx, opts.WatchInterval) })
		}
	}
	if s.src != nil {
		tick := opts.RetryTick
		if tick <= 0 {
			tick = time.Second
		}
		bg.Go(func() {
			s.src.run(watchCtx, tick, func() {
				specs, err := specsWith(cfg, s.src)
				if err == nil {
					err = s.reg.Reload(watchCtx, specs)
				}
				if err != nil {
					log.Error("reload after a url plugin change finished with errors", "error", err)
				}
			})
		})
	}
	go func() { bg.Wait(); close(s.done) }()
	return s, nil
}

// load loads specs in the background and waits for them at most wait
// (default defaultLoadWait): the failures of configured plugins known by
// then are returned, those of plugin-directory files logged. With a start
// gate (Options.Background) it does not wait: the gate opens when the load
// is done or wait has passed, and the failures go to startErr.
func (s *Server) load(ctx context.Context, specs []plugins.Spec, wait time.Duration) error {
	if wait <= 0 {
		wait = defaultLoadWait
	}
	loadCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stopLoad, s.loaded = stop, make(chan struct{})
	result := make(chan error, 1)
	go func() {
		defer close(s.loaded)
		// The lists open as soon as every plugin is listed: plugins
		// with a cached manifest are, before they have compiled (their
		// calls wait for them).
		result <- s.reg.LoadListed(loadCtx, specs, func() {
			if s.gate != nil {
				s.gate.open()
			}
		})
	}()
	if s.gate != nil {
		go s.background(loadCtx, result, wait)
		return nil
	}
	err, done := s.awaitLoad(ctx, result, wait)
	if !done {
		if err == nil {
			go s.lateLoad(result)
		}
		return err
	}
	return s.fatal(err)
}

// awaitLoad waits for the first load's result at most wait, showing its
// progress: done reports that the load ended (err is its result);
// otherwise err is ctx's error, or nil when wait passed first.
func (s *Server) awaitLoad(ctx context.Context, result <-chan error, wait time.Duration) (err error, done bool) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	if s.progress != nil {
		stopProgress := s.loadProgress()
		defer stopProgress()
	}
	select {
	case err = <-result:
		return err, true
	case <-ctx.Done():
		return ctx.Err(), false
	case <-timer.C:
		s.log.Warn("plugins still loading; serving those that are ready", "waited", wait.String(), "loading", s.reg.Loading())
		return nil, false
	}
}

// lateLoad waits for a first load that outlasted its wait and logs how it
// ended (Reload has logged each failure as it happened).
func (s *Server) lateLoad(result <-chan error) error {
	err := <-result
	if err != nil {
		s.log.Error("plugins finished loading with errors", "failed", len(unjoin(err)))
	} else {
		s.log.Info("plugins finished loading")
	}
	return err
}

// background waits for the first load behind the start gate: it opens the
// gate when the load is done or after wait, and sends the load's fatal
// failures to startErr. A load that Close stopped (loadCtx cancelled) did
// not fail: what it did not finish is no plugin's fault, so nothing is
// sent but nil.
func (s *Server) background(loadCtx context.Context, result <-chan error, wait time.Duration) {
	err, done := s.awaitLoad(context.Background(), result, wait)
	s.gate.open()
	if !done {
		err = s.lateLoad(result)
	}
	if err != nil && loadCtx.Err() != nil {
		s.log.Info("plugin loading stopped by shutdown", "unfinished", len(unjoin(err)))
		err = nil
	}
	err = s.fatal(err)
	if err == nil && s.urlErr != nil {
		err = <-s.urlErr
	}
	s.startErr <- err
}

// resolveLate resolves the url plugins of a server started with
// Options.Background, behind the local plugins: those serve (and the
// start gate opens) without waiting for any registry, and each url plugin
// is added, with list_changed, as soon as it is resolved and the first
// load is done. It returns the failures of required url plugins, to
// resolve or to load; the others are logged, naming the plugin, and
// retried (urlSources.run). It returns nil once ctx is cancelled (Close).
func (s *Server) resolveLate(ctx context.Context) error {
	var mu sync.Mutex
	var fatal []error
	err := s.src.resolveAll(ctx, 0, func(p *config.Plugin) {
		select {
		case <-s.loaded:
		case <-ctx.Done():
			return
		}
		specs, err := specsWith(s.cfg, s.src)
		if err == nil {
			err = s.reg.Reload(ctx, specs)
		}
		if err = s.fatal(err); err != nil {
			mu.Lock()
			fatal = append(fatal, err)
			mu.Unlock()
		}
	})
	if ctx.Err() != nil {
		return nil
	}
	return errors.Join(append(fatal, err)...)
}

// StartErr receives, once, the failures of the plugins that must load
// ([[plugins]] entries with a path, required url ones) in the first load
// of a Server made with Options.Background, or nil when there are none.
// wasmcp serve stops on such a failure, as it does when New returns one.
func (s *Server) StartErr() <-chan error { return s.startErr }

// fatal returns the failures in err of the plugins that must load, and
// logs the others as skipped.
func (s *Server) fatal(err error) error {
	if err == nil {
		return nil
	}
	var fatal []error
	for _, e := range unjoin(err) {
		var le *plugins.LoadError
		if errors.As(e, &le) && !s.mustLoad(le.Spec.Name) {
			s.log.Error("skipping plugin", "error", e)
			continue
		}
		fatal = append(fatal, e)
	}
	return errors.Join(fatal...)
}

// loadProgress prints, once a second after the first, the plugins still
// loading (compiling, mostly: a cold Go plugin takes seconds) until the
// returned function is called.
func (s *Server) loadProgress() (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(exited)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if l := s.reg.Loading(); len(l) > 0 {
				fmt.Fprintf(s.progress, "wasmcp: loading %d plugin(s) (%.0fs): %s\n", len(l), time.Since(start).Seconds(), strings.Join(l, ", "))
			}
		}
	}()
	return func() { close(done); <-exited }
}

// mustLoad reports whether a failure to load plugin name stops the
// server: [[plugins]] entries with a path, and url ones marked required.
func (s *Server) mustLoad(name string) bool {
	p := s.cfg.Plugin(name)
	return p != nil && (p.URL == "" || p.Required)
}

// Loading returns the plugin files still loading (in the background after
// New, or after a change with watch on), sorted; empty when every plugin
// is serving or has failed.
func (s *Server) Loading() []string { return s.reg.Loading() }

// kvDir resolves [server] kv_dir: empty means the user's data directory
// ($XDG_DATA_HOME/wasmcp/kv, else ~/.local/share/wasmcp/kv), so plugin data
// survives restarts; ":memory:" keeps it in memory only.
func kvDir(dir string) string {
	switch {
	case dir == config.MemoryKV:
		return ""
	case dir == "":
		base := os.Getenv("XDG_DATA_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			base = filepath.Join(home, ".local", "share")
		}
		return filepath.Join(base, "wasmcp", "kv")
	}
	return dir
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// Registry returns the plugin registry (for inspect and tests).
func (s *Server) Registry() *plugins.Registry { return s.reg }

// ServeStdio serves MCP on r and w until r ends or ctx is done.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.mcp.ServeStdio(ctx, r, w)
}

// CallTool runs one tools/call outside any session (the `wasmcp call`
// command): the result, held to the MCP result type as the engine holds
// a session's (a tool error when it does not conform), or a JSON-RPC
// error.
func (s *Server) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	params, err := json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	}{name, args})
	if err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	r := &mcp.Request{Method: "tools/call", Params: params}
	r.ProtocolVersion, r.ClientCapabilities = "2025-11-25", json.RawMessage("{}")
	if err := r.ParseParams(); err != nil {
		return nil, err
	}
	res, err := (&provider{reg: s.reg, log: s.log, denied: s.denied, az: s.az, pin: s.pin}).CallTool(ctx, r)
	if err != nil {
		return nil, err
	}
	return r.ConformResult(res)
}

// ReloadAuthz reads the [authz] policies again (wasmcp serve calls it on
// SIGHUP). When they do not load, the policies in force stay and the
// error is logged and returned; without [authz] it does nothing.
func (s *Server) ReloadAuthz() error {
	if s.az == nil {
		return nil
	}
	return s.az.reload()
}

// ReloadPins reads wasmcp.lock's pinned definitions again (wasmcp serve
// calls it on SIGHUP) and decides what serves against them. When the
// lock does not load, the definitions in force stay and the error is
// logged and returned; with pin = "off" it does nothing.
func (s *Server) ReloadPins() error { return s.pin.reload() }

// Close stops watching, drops every plugin (calls in flight finish), and
// closes the engine and the kv store.
func (s *Server) Close(ctx context.Context) error {
	if s.stopResolve != nil {
		s.stopResolve()
	}
	if s.stop != nil {
		s.stop()
		<-s.done
	}
	if s.stopResolve != nil {
		<-s.resolving
	}
	if s.stopLoad != nil {
		s.stopLoad()
		<-s.loaded
	}
	var errs []error
	if s.mcp != nil {
		errs = append(errs, s.mcp.Close())
	}
	if s.reg != nil {
		errs = append(errs, s.reg.Close(ctx))
	}
	if s.engine != nil {
		errs = append(errs, s.engine.Close(ctx))
	}
	if s.denied != nil {
		s.denied.Flush()
	}
	if s.aud != nil {
		// Write the queued events, at most shutdownFlush (a sink that
		// does not drain is given up).
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownFlush)
		errs = append(errs, s.aud.Close(actx))
		cancel()
	}
	if s.tel != nil {
		// Flush the spans, at most shutdownFlush.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownFlush)
		errs = append(errs, s.tel.Shutdown(fctx))
		cancel()
	}
	if s.kv != nil {
		errs = append(errs, s.kv.Close())
	}
	if s.clu != nil {
		errs = append(errs, s.clu.Close())
	}
	return errors.Join(errs...)
}

// toolRate is mcp.Options.ToolRate: the [[plugins]] rate and burst of the
// plugin serving the tool exposed as name, its bucket keyed by the
// plugin's name and its own name for the tool (so that a rename or a new
// prefix does not give callers a fresh bucket).
func (s *Server) toolRate(name string) (string, float64, int) {
	it, ok := s.reg.Tool(name)
	if !ok {
		return "", 0, 0
	}
	spec := it.Plugin.Spec()
	if spec.Rate <= 0 {
		return "", 0, 0
	}
	return it.Plugin.Name() + "\x00" + it.Orig, spec.Rate, spec.Burst
}
