package wasip2

import (
	"context"
	"net/http"
)

// HTTPClient sends the requests of wasi:http/outgoing-handler. It owns
// the policy: which URLs and addresses may be reached, redirects, body
// and time caps (hostapi.Host.HTTPClient applies http/fetch's). An error
// it returns is the guest's error-code; it must not panic.
type HTTPClient interface {
	Do(ctx context.Context, req *http.Request) (*http.Response, error)
}
