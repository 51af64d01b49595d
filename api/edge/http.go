package edge

import (
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
	responses := s.answerFrame(r.Context(), frame, make(slots, s.opts.MaxInFlight))
	out, err := jsonrpc.EncodeReply(frame.Batch, responses)
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
