package telemetry

import (
	"context"
	"encoding/json"
	"time"
)

// UsageKey is the _meta key of a tool result's usage ([telemetry]
// usage_in_meta).
const UsageKey = "io.wasmcp/usage"

// Usage is what one tool call cost, as UsageKey carries it.
type Usage struct {
	WallMs       float64 `json:"wallMs"`
	QueueWaitMs  float64 `json:"queueWaitMs"`
	RunMs        float64 `json:"runMs"` // the plugin calls once they had an instance
	PluginCalls  int     `json:"pluginCalls"`
	HostCalls    int     `json:"hostCalls"`
	HTTPRequests int     `json:"httpRequests"`
	HTTPSent     int64   `json:"httpBytesSent"`
	HTTPReceived int64   `json:"httpBytesReceived"`
	Denials      int     `json:"denials,omitempty"`
}

// AddUsage returns result (a tool result object) with the usage of the
// request of ctx in its _meta, when t has usage_in_meta on; result itself
// otherwise, or when it is not an object.
func (t *Telemetry) AddUsage(ctx context.Context, result json.RawMessage) json.RawMessage {
	if t == nil || !t.cfg.UsageInMeta {
		return result
	}
	st := stateFrom(ctx)
	if st == nil || st.plugin == "" {
		return result
	}
	u := Usage{
		WallMs:      ms(time.Since(st.ri.Start)),
		QueueWaitMs: ms(st.queueWait), RunMs: ms(st.runTime), PluginCalls: int(st.calls),
		HostCalls: int(st.hostCalls), HTTPRequests: int(st.httpReqs), HTTPSent: st.httpSent, HTTPReceived: st.httpRecv,
		Denials: int(st.denials),
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(result, &obj) != nil || obj == nil {
		return result
	}
	var meta map[string]json.RawMessage
	if m, ok := obj["_meta"]; ok && json.Unmarshal(m, &meta) != nil {
		return result
	}
	if meta == nil { // absent, or null
		meta = map[string]json.RawMessage{}
	}
	ub, err := json.Marshal(u)
	if err != nil {
		return result
	}
	meta[UsageKey] = ub
	mb, err := json.Marshal(meta)
	if err != nil {
		return result
	}
	obj["_meta"] = mb
	out, err := json.Marshal(obj)
	if err != nil {
		return result
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
