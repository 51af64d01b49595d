package edge

import (
	"context"
	"errors"
	"net/http"

	"github.com/mcpflow/mcpflow/api/access"
)

// ErrShuttingDown is the cause of the end of a face's request that the
// edge's shutdown cut short.
var ErrShuttingDown = errors.New("mcpflow is shutting down")

// admitted serves a face mounted beside /ws and /rpc (Mount) under
// the same admission: the Host, Origin and token checks of admit (403 or
// 401 with WWW-Authenticate), MaxConnsPerClient for the requests it is
// serving, and shutdown's accounting. The request's context carries the
// caller (access.PrincipalFrom), and ends when the edge closes.
func (s *Server) admitted(face http.Handler) http.HandlerFunc {
	return s.admittedBy(face, s.admit)
}

// signed serves a face whose requests carry their own credential (a
// webhook's signature, checked by the face): admitted's admission
// without the token; the caller in its context holds no scope.
func (s *Server) signed(face http.Handler) http.HandlerFunc {
	return s.admittedBy(face, func(w http.ResponseWriter, r *http.Request) (access.Principal, bool) {
		return signedCaller, s.gated(w, r)
	})
}

// admittedBy is admitted with admit as the check of who sends a request.
func (s *Server) admittedBy(face http.Handler, admit func(http.ResponseWriter, *http.Request) (access.Principal, bool)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.track.enter(&s.track.requests) {
			http.Error(w, "mcpflow is shutting down", http.StatusServiceUnavailable)
			return
		}
		defer s.track.requests.Done()
		caller, ok := admit(w, r)
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
		// tool call) as it ends /ws connections, with a cause of its own: a
		// face may take a plain cancel for the client's.
		ctx, cancel := context.WithCancelCause(access.WithPrincipal(r.Context(), caller))
		defer cancel(nil)
		defer context.AfterFunc(s.base, func() { cancel(ErrShuttingDown) })()
		face.ServeHTTP(w, r.WithContext(ctx))
	}
}

// signedCaller is the caller of a signed face's requests: it may call
// nothing; the face acts as the principal the signature names.
var signedCaller = access.NewPrincipal("signed", nil, nil)
