package hostapi

import "github.com/wasmcp/wasmcp/internal/abi"

// Bounds on the change notifications (notify/list_changed and
// notify/resource_updated) of one call. Each list_changed makes the host
// describe the plugin again (coalesced: at most one pending per plugin)
// and each resource_updated reaches every subscribed session, so a flood
// costs the host and the clients only this much per call. Past the bound
// the call goes on and the excess is dropped (one log line says so).
const (
	// maxChangeNotifications bounds the notify/* calls of one call.
	maxChangeNotifications = 1000
	// maxNotifyParams bounds the params of notify/*: a resource URI
	// longer than that is refused with abi.ErrTooBig without being
	// decoded.
	maxNotifyParams = 8 << 10
)

// progress handles {progress, total?, message?} -> {}. Without a client
// (or a progress token, which the Client decides) it is a no-op.
func (b *bound) progress(params []byte) ([]byte, int32) {
	if len(params) > maxProgressParams {
		return nil, abi.ErrTooBig
	}
	if b.notes >= maxNotifications {
		return empty, 0 // bound reached: do not even decode
	}
	var p struct {
		Progress *float64 `json:"progress"`
		Total    *float64 `json:"total"`
		Message  string   `json:"message"`
	}
	if !decode(params, &p) || p.Progress == nil {
		return nil, abi.ErrBadParams
	}
	if b.c == nil {
		return empty, 0
	}
	if msg := clip([]byte(p.Message), maxLogMessage); b.note(len(msg) + 32) {
		b.c.Progress(*p.Progress, p.Total, msg)
	}
	return empty, 0
}

// change counts one notify/* call and reports whether it may go on; the
// first call over the bound is logged.
func (b *bound) change() bool {
	b.changes++
	if b.changes == maxChangeNotifications+1 {
		b.h.log.Warn("plugin change notifications over the per-call limit are dropped", "limit", maxChangeNotifications)
	}
	return b.changes <= maxChangeNotifications
}

// changeParams starts a notify/* call: params over maxNotifyParams are
// refused undecoded, a call past the count (see change) is dropped with
// {}, and the rest are decoded into p. When ok is false the call answers
// res and errno.
func (b *bound) changeParams(params []byte, p any) (res []byte, errno int32, ok bool) {
	if len(params) > maxNotifyParams {
		return nil, abi.ErrTooBig, false
	}
	if !b.change() {
		return empty, 0, false
	}
	if !decode(params, p) {
		return nil, abi.ErrBadParams, false
	}
	return nil, 0, true
}

// listChanged handles notify/list_changed {kind} -> {}.
func (b *bound) listChanged(params []byte) ([]byte, int32) {
	var p struct {
		Kind string `json:"kind"`
	}
	if res, errno, ok := b.changeParams(params, &p); !ok {
		return res, errno
	}
	switch p.Kind {
	case "tools", "resources", "prompts":
	default:
		return nil, abi.ErrBadParams
	}
	if b.c != nil {
		b.c.NotifyListChanged(p.Kind)
	}
	return empty, 0
}

// resourceUpdated handles notify/resource_updated {uri} -> {}.
func (b *bound) resourceUpdated(params []byte) ([]byte, int32) {
	var p struct {
		URI string `json:"uri"`
	}
	if res, errno, ok := b.changeParams(params, &p); !ok {
		return res, errno
	}
	if p.URI == "" {
		return nil, abi.ErrBadParams
	}
	if b.c != nil {
		b.c.NotifyResourceUpdated(p.URI)
	}
	return empty, 0
}

// taskStart handles task/start {} -> {}: a call that runs as a task
// tells the host it is under way (the client gets the task at once).
func (b *bound) taskStart(params []byte) ([]byte, int32) {
	return b.signal(params, Client.StartTask)
}

// streamClose handles stream/close {} -> {}: the client's response stream
// is closed (where there is one) and the request goes on; what the plugin
// sends afterwards, its result included, reaches the client when it
// reconnects.
func (b *bound) streamClose(params []byte) ([]byte, int32) {
	return b.signal(params, Client.CloseStream)
}

// signal is a method {} (or no params) -> {} that tells the client do.
func (b *bound) signal(params []byte, do func(Client)) ([]byte, int32) {
	if len(params) > 0 && !decode(params, &struct{}{}) {
		return nil, abi.ErrBadParams
	}
	if b.c != nil {
		do(b.c)
	}
	return empty, 0
}
