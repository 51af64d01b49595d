package edge

import (
	"context"
	"net/http"

	"github.com/mcpflow/mcpflow/api/access"
)

// admitted serves a face mounted beside /ws and /rpc (Options.Faces) under
// the same admission: the Host, Origin and token checks of admit (403 or
// 401 with WWW-Authenticate), MaxConnsPerClient for the requests it is
// serving, and shutdown's accounting. The request's context carries the
// caller (access.PrincipalFrom), and ends when the edge closes.
func (s *Server) admitted(face http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.track.enter(&s.track.requests) {
			http.Error(w, "mcpflow is shutting down", http.StatusServiceUnavailable)
			return
		}
		defer s.track.requests.Done()
		caller, ok := s.admit(w, r)
		if !ok {
			return
		}
		addr := clientAddr(r)
		if _, ok := s.clients.admit(addr); !ok {
			s.refuseClient(w, addr)
			return
		}
		defer s.clients.leave(addr)
		// Shutdown (s.close) ends the face's long requests (an SSE stream, a
		// tool call) as it ends /ws connections.
		ctx, cancel := context.WithCancel(access.WithPrincipal(r.Context(), caller))
		defer cancel()
		defer context.AfterFunc(s.base, cancel)()
		face.ServeHTTP(w, r.WithContext(ctx))
	}
}
