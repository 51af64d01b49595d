package edge

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// serveHTTP answers one JSON-RPC frame per POST, for clients of the
// reference system's HTTP transport. Per client address it applies
// MaxConnsPerClient (counting the requests being served) and MaxInFlight
// (slots shared by that address's requests); the body must arrive within
// BodyTimeout and the reply be taken within WriteTimeout.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	// A cross-site page may POST here without a CORS preflight
	// (text/plain), so /rpc applies /ws's Host, Origin and token checks.
	caller, ok := s.admit(w, r)
	if !ok {
		return
	}
	addr := clientAddr(r)
	cl, ok := s.clients.admit(addr)
	if !ok {
		s.refuseClient(w, addr)
		return
	}
	defer s.clients.leave(addr)
	body, status := s.readBody(w, r)
	if status != 0 {
		stopReading(w)
		http.Error(w, http.StatusText(status), status)
		return
	}
	deadline := time.Now().Add(s.opts.RequestTimeout)
	frame := jsonrpc.DecodeFrame(body, s.opts.MaxBatch)
	if !s.track.enter(&s.track.requests) {
		s.writeReply(w, frame.Batch, refuse(frame))
		return
	}
	defer s.track.requests.Done()
	// Shutdown (s.close) cancels the handlers of /rpc as well as those of
	// /ws: http.Server.Shutdown would wait for them.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.base, cancel)()
	replied := make(chan []byte, 1)
	var handlers sync.WaitGroup
	s.answer(frameJob{
		ctx: ctx, deadline: deadline, inFlight: cl.slots, scope: "from this client", caller: caller, wg: &handlers,
		deliver: func(reply []byte, _ int) { replied <- reply },
	}, frame)
	reply := <-replied
	handlers.Wait()
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
	writeEncoded(w, reply)
}

// readBody reads a POST body of at most MaxMessageBytes within
// BodyTimeout; on failure it returns the HTTP status to answer with.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(s.opts.BodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxMessageBytes))
	// Cleared at once: net/http's background read would otherwise hit the
	// deadline while the request runs, and cancel it.
	_ = rc.SetReadDeadline(time.Time{})
	if err == nil {
		return body, 0
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, http.StatusRequestEntityTooLarge
	case errors.Is(err, os.ErrDeadlineExceeded):
		slog.Debug("rpc body too slow", "remote", r.RemoteAddr, "timeout", s.opts.BodyTimeout)
		return nil, http.StatusRequestTimeout
	default:
		return nil, http.StatusBadRequest
	}
}

// writeReply writes the responses to one POSTed frame.
func (s *Server) writeReply(w http.ResponseWriter, batch bool, responses []jsonrpc.Response) {
	out, err := jsonrpc.EncodeReply(batch, responses)
	if err != nil {
		slog.Error("encode reply", "err", err)
		http.Error(w, "encode reply", http.StatusInternalServerError)
		return
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
	writeEncoded(w, out)
}

// writeEncoded writes an encoded reply: 204 when there is none.
func writeEncoded(w http.ResponseWriter, out []byte) {
	if out == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}
