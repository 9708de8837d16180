package mcp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// subURI is a subscribed URI of 4000 bytes: with its 64 bytes of
// overhead, 16 fit a budget of 64 KiB.
func subURI(i int) string {
	p := fmt.Sprintf("test://r/%d/", i)
	return p + strings.Repeat("x", 4000-len(p))
}

// TestSubscriptionBudget checks that the subscriptions of all sessions
// and listen streams together are held to MaxSubscriptionBytes: past it
// a subscribe or a listen is refused as busy, and unsubscribing, ending
// a listen stream and deleting a session give their bytes back.
func TestSubscriptionBudget(t *testing.T) {
	const budget = 64 << 10
	opts := &mcp.Options{MaxSubscriptionBytes: budget}

	t.Run("sessions", func(t *testing.T) {
		e := startHTTPWith(t, opts, nil, nil)
		a, b := e.legacySession("2025-11-25", nil), e.legacySession("2025-11-25", nil)
		subscribe := func(h map[string]string, i int) *msg {
			t.Helper()
			return lastMsg(t, e.post(request(i, "resources/subscribe", map[string]any{"uri": subURI(i)}), h))
		}
		for i := range 10 {
			wantResult(t, subscribe(a, i))
		}
		for i := 10; i < 16; i++ {
			wantResult(t, subscribe(b, i))
		}
		m := subscribe(b, 16)
		wantError(t, m, jsonrpc.CodeRequestTimeout)
		if !strings.Contains(m.Error.Message, "65536 bytes") || !strings.Contains(string(m.Error.Data), `"busy":true`) {
			t.Errorf("refusal %q %s", m.Error.Message, m.Error.Data)
		}
		wantResult(t, subscribe(a, 3)) // a subscription kept already costs nothing more
		wantResult(t, lastMsg(t, e.post(request(20, "resources/unsubscribe", map[string]any{"uri": subURI(0)}), a)))
		wantResult(t, subscribe(b, 16))
		wantError(t, subscribe(b, 17), jsonrpc.CodeRequestTimeout)
		resp := e.do(http.MethodDelete, a)
		resp.Body.Close()
		for i := 17; i < 26; i++ {
			wantResult(t, subscribe(b, i))
		}
		wantError(t, subscribe(b, 26), jsonrpc.CodeRequestTimeout)
		resp = e.do(http.MethodDelete, b)
		resp.Body.Close()
		if n := mcp.SubscriptionBytes(e.srv); n != 0 {
			t.Errorf("%d bytes of subscriptions counted after every session ended", n)
		}
	})

	t.Run("listen", func(t *testing.T) {
		c := startStdio(t, nil, opts)
		c.initialize("2025-11-25", nil)
		uris := make([]string, 10)
		for i := range uris {
			uris[i] = subURI(i)
		}
		c.send(request("listen", "subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"resourceSubscriptions": uris}}, nil)))
		if m := c.next(); m.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("listen: %s", m.raw)
		}
		for i := 10; i < 16; i++ {
			m, _ := c.rpc(i, "resources/subscribe", map[string]any{"uri": subURI(i)})
			wantResult(t, m)
		}
		m, _ := c.rpc(16, "resources/subscribe", map[string]any{"uri": subURI(16)})
		wantError(t, m, jsonrpc.CodeRequestTimeout)
		m, _ = c.rpc("listen2", "subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{subURI(30)}}}, nil))
		wantError(t, m, jsonrpc.CodeRequestTimeout)
		c.send(notification("notifications/cancelled", map[string]any{"requestId": "listen"}))
		testutil.Eventually(t, 10*time.Second, "the listen stream's bytes given back", func() bool {
			return mcp.SubscriptionBytes(c.srv) == 6*4064
		})
		for i := 16; i < 26; i++ {
			m, _ := c.rpc(i, "resources/subscribe", map[string]any{"uri": subURI(i)})
			wantResult(t, m)
		}
	})
}
