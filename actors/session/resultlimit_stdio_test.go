package session

import (
	"context"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpflow/mcpflow/actors/config"
)

// readAnswer reads the next message of c, which must be an answer.
func readAnswer(t *testing.T, c interface {
	Read(context.Context) (jsonrpc.Message, error)
}) *jsonrpc.Response {
	t.Helper()
	is := is.New(t)
	is.Helper()
	msg, err := c.Read(context.Background())
	is.NoErr(err) // the connection reads on
	r, ok := msg.(*jsonrpc.Response)
	is.True(ok) // an answer
	return r
}

func TestAStdioLineOverTheLimitIsAnsweredAsTooLargeAndTheNextLineIsRead(t *testing.T) {
	is := is.New(t)
	// A notification over the limit, an answer over it whose id comes
	// after its result (as the TypeScript SDK writes it), then a small
	// answer; the server then waits for its stdin to close.
	script := `big=$(head -c 5000 /dev/zero | tr '\0' x)
printf '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%s"}}\n' "$big"
printf '{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"%s"}]},"id":7}\n' "$big"
printf '{"jsonrpc":"2.0","id":8,"result":{}}\n'
exec cat >/dev/null`
	conn := config.Connection{Kind: "mcp", ID: "raw.one", MaxResultBytes: 1024,
		Transport: config.Transport{Kind: config.TransportStdio, Command: "sh", Args: []string{"-c", script}}}
	tr, err := Stdio{}.NewTransport(conn)
	is.NoErr(err)
	c, err := tr.Connect(context.Background())
	is.NoErr(err)
	t.Cleanup(func() { _ = c.Close() })

	first := readAnswer(t, c) // the notification was dropped
	is.Equal(first.ID.Raw(), int64(7))
	limit, ok := asTooLarge(first.Error)
	is.True(ok) // the answer made in place of the oversize one
	is.Equal(limit, int64(1024))
	is.Equal(tooLargeError(conn.ID, limit).Error(),
		`result_too_large: the answer of source "raw.one" passed its limit of 1024 bytes (max_result_bytes); raise the source's max_result_bytes, or server.limits.max_result_bytes, to accept larger answers`)

	second := readAnswer(t, c) // go-sdk's decoder goes on
	is.Equal(second.ID.Raw(), int64(8))
	is.NoErr(second.Error)
	is.Equal(string(second.Result), "{}")
}

func TestAServerCannotPassItsOwnErrorForATooLargeAnswer(t *testing.T) {
	is := is.New(t)
	forged := &jsonrpc.Error{Code: codeTooLarge, Message: "result_too_large", Data: []byte(`{"mcpflow_result_too_large":"guess","limit":1}`)}
	_, ok := asTooLarge(forged)
	is.True(!ok) // without this process's mark, a server's error is its own
}
