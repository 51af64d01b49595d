package edge_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/metrics/metricstest"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// scrape GETs /metrics with token ("" for none) and host ("" for the
// server's own), and returns the status and, on 200, the metrics.
func scrape(t *testing.T, hs *httptest.Server, token, host string) (int, metricstest.Families) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL+"/metrics", nil)
	is.NoErr(err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := hs.Client().Do(req)
	is.NoErr(err) // GET /metrics
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, metricstest.Parse(t, resp.Body)
}

func TestMetricsNeedWhatTheAPIsReadMethodsNeed(t *testing.T) {
	opts := testOptions()
	opts.Metrics = metrics.New()
	opts.Guard = access.NewGuard([]config.Token{
		{Name: "reader", Token: "reader-token-0123456789", Scopes: []string{"read"}},
		{Name: "runner", Token: "runner-token-0123456789", Scopes: []string{"run"}},
	})
	_, hs := start(t, newFixture(), opts)
	for _, tc := range []struct {
		name, token, host string
		status            int
	}{
		{"no token", "", "", http.StatusUnauthorized},
		{"a token without read", "runner-token-0123456789", "", http.StatusForbidden},
		{"a read token", "reader-token-0123456789", "", http.StatusOK},
		{"a foreign host", "reader-token-0123456789", "metrics.evil.example", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			status, f := scrape(t, hs, tc.token, tc.host)
			is.Equal(status, tc.status)
			if status == http.StatusOK {
				is.Equal(f.Type("mcpflow_websocket_connections"), "GAUGE") // a vector shows once it has a series
			}
		})
	}

	t.Run("loopback without tokens", func(t *testing.T) {
		is := is.New(t)
		opts := testOptions()
		opts.Metrics = metrics.New()
		_, hs := start(t, newFixture(), opts)
		status, _ := scrape(t, hs, "", "")
		is.Equal(status, http.StatusOK)
	})
	t.Run("none without metrics", func(t *testing.T) {
		is := is.New(t)
		_, hs := start(t, newFixture(), testOptions())
		status, _ := scrape(t, hs, "", "")
		is.Equal(status, http.StatusNotFound)
	})
}

func TestRequestsAreCountedByServedMethodAndCode(t *testing.T) {
	is := is.New(t)
	opts := testOptions()
	opts.Metrics = metrics.New()
	_, hs := start(t, newFixture(), opts)
	status, _, _ := post(t, hs, `[{"jsonrpc":"2.0","id":1,"method":"test.fast"},{"jsonrpc":"2.0","method":"test.fast"},`+
		`{"jsonrpc":"2.0","id":2,"method":"no.such.method.for.a.label"},{"jsonrpc":"2.0","id":3,"method":"test.domain"},{"jsonrpc":"2.0","id":4}]`)
	is.Equal(status, http.StatusOK)

	f := metricstest.Gather(t, opts.Metrics.Registry())
	fast, _ := f.Value("mcpflow_requests_total", "method", "test.fast", "code", "ok")
	is.Equal(fast, 2.0) // the notification too
	unknown, _ := f.Value("mcpflow_requests_total", "method", "other", "code", "-32601")
	is.Equal(unknown, 1.0) // an unknown method never becomes a label
	domain, _ := f.Value("mcpflow_requests_total", "method", "test.domain", "code", "5000")
	is.Equal(domain, 1.0)
	invalid, _ := f.Value("mcpflow_requests_total", "method", "other", "code", "-32600")
	is.Equal(invalid, 1.0)
	for _, m := range f.LabelValues("mcpflow_requests_total", "method") {
		is.True(m != "no.such.method.for.a.label")
	}

	c := dial(t, hs)
	c.call("1", "test.fast", "")
	open, _ := metricstest.Gather(t, opts.Metrics.Registry()).Value("mcpflow_websocket_connections")
	is.Equal(open, 1.0)
	is.NoErr(c.ws.Close())
	poll.For(t, "the server sees the close", wait, func() bool {
		open, _ = metricstest.Gather(t, opts.Metrics.Registry()).Value("mcpflow_websocket_connections")
		return open == 0
	})
	is.Equal(open, 0.0) // the closed connection is no longer counted
}
