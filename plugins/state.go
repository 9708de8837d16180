package plugins

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrBadState is returned for a requestState that was not minted by this
// server for this plugin and request, was altered, or has expired.
var ErrBadState = errors.New("invalid or expired requestState")

// stateSealer integrity-protects the requestState a plugin hands out in an
// input_required result (ABI §6): the state leaves the server bound to the
// plugin, the method, the tool/prompt name or resource URI, the caller and
// an expiry, under an HMAC-SHA256 with a server key.
type stateSealer struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// stateBinding is what a sealed state is bound to.
type stateBinding struct {
	Plugin    string `json:"p"`
	Method    string `json:"m"`
	Target    string `json:"t"`           // tool or prompt name, or resource URI
	Principal string `json:"a,omitempty"` // authenticated caller, if any
}

type sealedState struct {
	stateBinding
	Expires int64  `json:"e"`
	State   string `json:"s"`
}

const statePrefix = "wasmcp1."

func newStateSealer(key []byte, ttl time.Duration) (*stateSealer, error) {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("state key: %w", err)
		}
	}
	if len(key) < 16 {
		return nil, errors.New("state key must be at least 16 bytes")
	}
	if ttl <= 0 {
		ttl = time.Hour
	}
	return &stateSealer{key: key, ttl: ttl, now: time.Now}, nil
}

func (s *stateSealer) mac(payload string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// seal wraps a plugin's state for the client.
func (s *stateSealer) seal(b stateBinding, state string) string {
	raw, _ := json.Marshal(sealedState{stateBinding: b, Expires: s.now().Add(s.ttl).Unix(), State: state})
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return statePrefix + payload + "." + s.mac(payload)
}

// open checks a state from the client and returns the plugin's own state.
func (s *stateSealer) open(b stateBinding, token string) (string, error) {
	rest, ok := strings.CutPrefix(token, statePrefix)
	if !ok {
		return "", ErrBadState
	}
	payload, sig, ok := strings.Cut(rest, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(s.mac(payload))) {
		return "", ErrBadState
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return "", ErrBadState
	}
	var st sealedState
	if json.Unmarshal(raw, &st) != nil || st.stateBinding != b || s.now().Unix() > st.Expires {
		return "", ErrBadState
	}
	return st.State, nil
}
