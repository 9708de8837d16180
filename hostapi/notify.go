package hostapi

import "github.com/wasmcp/wasmcp/internal/abi"

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

// listChanged handles notify/list_changed {kind} -> {}.
func (b *bound) listChanged(params []byte) ([]byte, int32) {
	var p struct {
		Kind string `json:"kind"`
	}
	if !decode(params, &p) {
		return nil, abi.ErrBadParams
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
	if !decode(params, &p) || p.URI == "" {
		return nil, abi.ErrBadParams
	}
	if b.c != nil {
		b.c.NotifyResourceUpdated(p.URI)
	}
	return empty, 0
}

// streamClose handles stream/close {} -> {}: the client's response stream
// is closed (where there is one) and the request goes on; what the plugin
// sends afterwards, its result included, reaches the client when it
// reconnects.
func (b *bound) streamClose(params []byte) ([]byte, int32) {
	if len(params) > 0 && !decode(params, &struct{}{}) {
		return nil, abi.ErrBadParams
	}
	if b.c != nil {
		b.c.CloseStream()
	}
	return empty, 0
}
