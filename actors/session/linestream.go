package session

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LineStream is a transport of newline-delimited JSON-RPC over a byte
// stream (as stdio's) whose connection the session makes itself, a
// lineConn, as it does a stdio server's: a session reads the stream with
// its own bound (max_result_bytes) and decoder. Its Connect is for other
// clients.
type LineStream interface {
	// ConnectStream returns the stream's ends: what the server writes,
	// and where it reads, whose Close ends the stream (and a Read
	// waiting on it).
	ConnectStream(ctx context.Context) (io.Reader, io.WriteCloser, error)
}

// streamTransport connects a LineStream with a lineConn, bounding each
// line at limit; it is a noticeHooker.
type streamTransport struct {
	stream  LineStream
	limit   int64
	log     *slog.Logger
	notices noticeHook
}

func (t *streamTransport) hookNotices(notice func(method string, params json.RawMessage)) {
	t.notices.hookNotices(notice)
}

func (t *streamTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	r, w, err := t.stream.ConnectStream(ctx)
	if err != nil {
		return nil, err
	}
	return newLineConn(newMessageReader(io.NopCloser(r), t.limit, false, false, t.log, nil), &t.notices, w), nil
}
