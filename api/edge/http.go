package edge

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// serveHTTP answers one JSON-RPC frame per POST, for clients of the
// reference system's HTTP transport.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	// A cross-site page may POST here without a CORS preflight (text/plain),
	// so /rpc applies /ws's origin check.
	if !s.checkOrigin(r) {
		http.Error(w, "origin not allowed", http.StatusForbidden)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxMessageBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "read request body", http.StatusBadRequest)
		return
	}
	frame := jsonrpc.DecodeFrame(body, s.opts.MaxBatch)
	if !s.track.enter(&s.track.requests) {
		writeReply(w, frame.Batch, refuse(frame))
		return
	}
	defer s.track.requests.Done()
	// Shutdown (s.close) cancels the handlers of /rpc as well as those of
	// /ws: http.Server.Shutdown would wait for them.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.base, cancel)()
	writeReply(w, frame.Batch, s.answerFrame(ctx, frame, make(slots, s.opts.MaxInFlight)))
}

// writeReply writes the responses to one POSTed frame.
func writeReply(w http.ResponseWriter, batch bool, responses []jsonrpc.Response) {
	out, err := jsonrpc.EncodeReply(batch, responses)
	switch {
	case err != nil:
		slog.Error("encode reply", "err", err)
		http.Error(w, "encode reply", http.StatusInternalServerError)
	case out == nil:
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	}
}
