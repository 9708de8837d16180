package server

import (
	"context"
	"errors"
	"time"

	"github.com/wasmcp/wasmcp/internal/telemetry"
	"github.com/wasmcp/wasmcp/plugins"
	"github.com/wasmcp/wasmcp/runtime"
)

// telemetryConfig maps [telemetry] to telemetry.Config.
func (s *Server) telemetryConfig(version string) telemetry.Config {
	t := &s.cfg.Telemetry
	return telemetry.Config{
		Metrics:            t.Metrics != "",
		Endpoint:           t.Endpoint,
		TracesEndpoint:     t.TracesEndpoint,
		Protocol:           t.Protocol,
		ServiceName:        t.ServiceName,
		ServiceVersion:     version,
		Sampler:            t.Sampler,
		SamplerArg:         t.SamplerArg,
		ScheduleDelay:      time.Duration(t.ScheduleDelay),
		ResourceAttributes: t.ResourceAttributes,
		UsageInMeta:        t.UsageInMeta,
		Audit:              t.Audit,
		Logger:             s.log,
		Plugins:            s.pluginStats,
		AuditDropped:       s.auditDroppedFunc(),
	}
}

// toolMetrics tells the metrics the tools each loaded plugin serves, so
// that the series of tools and plugins gone are dropped (a plugin that
// renames its tools on every call must not grow /metrics).
func (s *Server) toolMetrics() {
	if s.tel == nil || s.reg == nil {
		return
	}
	ps := s.reg.Plugins()
	tools := make(map[string][]string, len(ps))
	for _, p := range ps {
		tools[p.Name()] = p.ToolNames()
	}
	s.tel.SetTools(tools)
}

// pluginStats is what the metrics report of each live plugin's pool.
func (s *Server) pluginStats() []telemetry.PluginStats {
	if s.reg == nil {
		return nil
	}
	ps := s.reg.Plugins()
	out := make([]telemetry.PluginStats, 0, len(ps))
	for _, p := range ps {
		st := p.Stats()
		out = append(out, telemetry.PluginStats{Name: p.Name(), Idle: st.Idle, Busy: st.Busy, Waiting: st.Waiting,
			Created: st.Created, Discarded: st.Discarded, Recycled: st.Recycled, Expired: st.Expired,
			GuestCPU: st.GuestCPU, Compile: st.Compile, Memory: st.Memory, CompileCached: st.CompileCached})
	}
	return out
}

// recordOutcome tells the telemetry of ctx how the plugin call ended (see
// mapError for the same classification as the client sees it).
func recordOutcome(ctx context.Context, err error) {
	if err == nil {
		return // ok or tool_error: the result says
	}
	var (
		rtErr  *runtime.Error
		inErr  *plugins.InputRequestError
		argErr *plugins.ArgumentsError
		outErr *plugins.OutputError
	)
	o := telemetry.OutcomeError
	switch {
	case errors.As(err, &inErr):
		o = telemetry.OutcomeDenied
		telemetry.Denied(ctx, "input_request", inErr.Method)
	case errors.As(err, &argErr), errors.As(err, &outErr):
		o = telemetry.OutcomeToolError
	case errors.As(err, &rtErr):
		switch rtErr.Kind {
		case runtime.KindDeadline:
			o = telemetry.OutcomeTimeout
		case runtime.KindCanceled:
			o = telemetry.OutcomeCancelled
		case runtime.KindMemory:
			o = telemetry.OutcomeMemory
		case runtime.KindOutput:
			o = telemetry.OutcomeOutput
		case runtime.KindBusy:
			o = telemetry.OutcomeBusy
		case runtime.KindTrap, runtime.KindExit, runtime.KindStatus, runtime.KindBadModule:
			o = telemetry.OutcomeTrap
		}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		o = telemetry.OutcomeCancelled
	}
	telemetry.SetOutcome(ctx, o)
}
