package edge

import (
	"net/http"
	"strconv"

	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// metricsPath serves Options.Metrics in the Prometheus text format.
const metricsPath = "/metrics"

// serveMetrics answers a scrape of /metrics. It is checked as /ws and /rpc
// are (Host, Origin, bearer token) and needs the read scope: the metrics
// name deployments, connections and tools, and say how busy each is.
// Without tokens that is every loopback client, as for the API.
func (s *Server) serveMetrics(scrape http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		caller, ok := s.admit(w, r)
		if !ok {
			return
		}
		if !caller.Allows(access.Read) {
			refuseHTTP(w, http.StatusForbidden, access.Forbidden(caller, "GET "+metricsPath, access.Read))
			return
		}
		scrape.ServeHTTP(w, r)
	}
}

// countRequest counts a request to method answered with resp: by method,
// when the edge serves it (metrics.Other otherwise, so that clients
// cannot make labels up), and by code ("ok", or the error's code).
func (s *Server) countRequest(method string, resp jsonrpc.Response) {
	if s.opts.Metrics == nil {
		return
	}
	if _, ok := s.methods[method]; !ok {
		method = metrics.Other
	}
	code := "ok"
	if resp.Error != nil {
		code = strconv.Itoa(resp.Error.Code)
	}
	s.opts.Metrics.Request(method, code)
}
