package hostapi

import "github.com/wasmcp/wasmcp/internal/abi"

// configGet handles config/get {key} -> {value}: only keys granted in
// Grants.Config; any other key is abi.ErrDenied (so a plugin cannot probe
// which keys exist).
func (h *Host) configGet(params []byte) ([]byte, int32) {
	var p struct {
		Key string `json:"key"`
	}
	if !decode(params, &p) || p.Key == "" {
		return nil, abi.ErrBadParams
	}
	v, granted := h.grants.Config[p.Key]
	if !granted {
		return nil, abi.ErrDenied
	}
	return ok(struct {
		Value string `json:"value"`
	}{v})
}
