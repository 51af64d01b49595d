package edge

import (
	"log/slog"
	"net/http"

	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// admit checks where a /ws upgrade or a /rpc POST comes from and who sends
// it: its Host (a loopback or configured name, against DNS rebinding), its
// Origin (none, a loopback page or an allowed origin, against cross-site
// requests) and its bearer token. A refused request is answered here, with
// 403 or 401 and a JSON-RPC error body (id null) that says why, and admit
// returns false: nothing else happens.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) (access.Principal, bool) {
	if !s.gated(w, r) {
		return access.Principal{}, false
	}
	token := access.Token(r)
	p, ok := s.opts.Guard.Authenticate(token)
	if !ok {
		slog.Info("request refused: authentication", "remote", clientAddr(r), "token_sent", token != "")
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcpflow"`)
		refuseHTTP(w, http.StatusUnauthorized, access.Unauthenticated(token))
		return access.Principal{}, false
	}
	return p, true
}

// gated is admit's check of the Host and the Origin, without the token:
// false when it refused the request (403, answered here).
func (s *Server) gated(w http.ResponseWriter, r *http.Request) bool {
	gate := s.opts.Gate
	switch {
	case !gate.AllowHost(r.Host):
		refuseHTTP(w, http.StatusForbidden, jsonrpc.Errorf(jsonrpc.Forbidden,
			"host %q is not served: use a loopback address or a name in access.allowed_hosts", r.Host))
		return false
	case !gate.AllowOrigin(r.Header.Get("Origin")):
		refuseHTTP(w, http.StatusForbidden, jsonrpc.Errorf(jsonrpc.Forbidden,
			"origin %q is not allowed: add it to access.allowed_origins (--allow-origin)", r.Header.Get("Origin")))
		return false
	}
	return true
}

// refuseHTTP answers an HTTP request, whose body it does not read, with
// status and a JSON-RPC error reply (id null).
func refuseHTTP(w http.ResponseWriter, status int, e *jsonrpc.Error) {
	stopReading(w)
	body, err := jsonrpc.EncodeResponse(jsonrpc.NewError(jsonrpc.NullID, e))
	if err != nil {
		http.Error(w, http.StatusText(status), status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
