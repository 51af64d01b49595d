package session

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// pipeStream is a LineStream over one end of a net.Pipe.
type pipeStream struct{ end net.Conn }

func (p pipeStream) ConnectStream(context.Context) (io.Reader, io.WriteCloser, error) {
	return p.end, p.end, nil
}

func TestALineStreamIsReadAndWrittenByTheSession(t *testing.T) {
	is := is.New(t)
	ours, theirs := net.Pipe()
	defer theirs.Close()
	st := &streamTransport{stream: pipeStream{ours}, limit: 1 << 20, log: slog.Default()}
	noticed := make(chan string, 1)
	st.hookNotices(func(method string, _ json.RawMessage) { noticed <- method })
	conn, err := st.Connect(t.Context())
	is.NoErr(err)
	_, ok := conn.(*lineConn)
	is.True(ok) // the session's own connection

	go func() {
		_, _ = io.WriteString(theirs, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`+"\n")
	}()
	m, err := conn.Read(t.Context())
	is.NoErr(err)
	is.Equal(m.(*jsonrpc.Request).Method, methodLog)
	is.Equal(<-noticed, methodLog) // the hook had it

	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 256)
		n, _ := theirs.Read(buf)
		got <- string(buf[:n])
	}()
	is.NoErr(conn.Write(t.Context(), &jsonrpc.Request{Method: "notifications/initialized"}))
	is.Equal(<-got, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n") // one line, written at once

	is.NoErr(conn.Close())
	_, err = conn.Read(t.Context())
	is.Equal(err, io.EOF) // closed: its reads end
}
