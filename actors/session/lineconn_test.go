package session

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// writes records each Write as one string.
type writes struct {
	lines  []string
	closed bool
}

func (w *writes) Write(p []byte) (int, error) {
	w.lines = append(w.lines, string(p))
	return len(p), nil
}
func (w *writes) Close() error { w.closed = true; return nil }

// lineConnOn is a lineConn reading in, bounded at limit, its notices
// recorded in noticed.
func lineConnOn(in string, limit int64, noticed *[]string, w io.WriteCloser) *lineConn {
	hook := &noticeHook{}
	hook.hookNotices(func(method string, _ json.RawMessage) { *noticed = append(*noticed, method) })
	return newLineConn(newMessageReader(io.NopCloser(strings.NewReader(in)), limit, false, false, slog.Default(), nil), hook, w)
}

func TestALineConnHandsANotificationToTheHookBeforeGoSDKReadsIt(t *testing.T) {
	is := is.New(t)
	var noticed []string
	c := lineConnOn("\n"+`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`+"\r\n"+
		"  \n"+`{"jsonrpc":"2.0","id":1,"result":{}}`, 1<<20, &noticed, &writes{})
	ctx := t.Context()
	m, err := c.Read(ctx)
	is.NoErr(err)
	is.Equal(m.(*jsonrpc.Request).Method, methodProgress)
	is.Equal(noticed, []string{methodProgress}) // the hook had it first
	m, err = c.Read(ctx)
	is.NoErr(err) // blank lines are skipped; the last line needs no newline
	is.Equal(m.(*jsonrpc.Response).ID, mustID(t, 1))
	_, err = c.Read(ctx)
	is.Equal(err, io.EOF)
}

func TestALineConnTakesABatchOneMessageAtATime(t *testing.T) {
	is := is.New(t)
	var noticed []string
	c := lineConnOn(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}]`+"\n",
		1<<20, &noticed, &writes{})
	ctx := t.Context()
	m, err := c.Read(ctx)
	is.NoErr(err)
	is.Equal(m.(*jsonrpc.Request).Method, "ping")
	m, err = c.Read(ctx)
	is.NoErr(err)
	is.Equal(m.(*jsonrpc.Request).Method, methodLog)
	is.Equal(noticed, []string{methodLog})
}

func TestALineConnReadsAnAnswerMadeForALineOverTheLimit(t *testing.T) {
	is := is.New(t)
	var noticed []string
	c := lineConnOn(`{"jsonrpc":"2.0","id":"call-1","result":{"text":"`+strings.Repeat("x", 500)+`"}}`+"\n"+`{"jsonrpc":"2.0","id":2,"result":{}}`+"\n",
		200, &noticed, &writes{})
	m, err := c.Read(t.Context())
	is.NoErr(err)
	want, err := jsonrpc.DecodeMessage(tooLargeAnswer([]byte(`"call-1"`), 200))
	is.NoErr(err)
	is.Equal(m, want) // the answer that replaces it
	m, err = c.Read(t.Context())
	is.NoErr(err)
	is.Equal(m.(*jsonrpc.Response).ID, mustID(t, 2)) // and the next line is read
}

func TestALineConnReadsAMessageSpreadOverLinesUpToTheBound(t *testing.T) {
	is := is.New(t)
	var noticed []string
	spread := "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {\"text\": \"a { [ \\\" b\"}\n}\n"
	c := lineConnOn(spread+`{"jsonrpc":"2.0","id":2,"result":{}}`+"\n", 1<<20, &noticed, &writes{})
	m, err := c.Read(t.Context())
	is.NoErr(err) // a pretty-printed message, as go-sdk's reader takes it
	is.Equal(string(m.(*jsonrpc.Response).Result), `{"text": "a { [ \" b"}`)
	m, err = c.Read(t.Context())
	is.NoErr(err)
	is.Equal(m.(*jsonrpc.Response).ID, mustID(t, 2)) // and the next one after it

	c = lineConnOn(strings.Repeat("{\"a\":\n", 100), 200, &noticed, &writes{})
	_, err = c.Read(t.Context())
	is.True(err != nil) // spread past the bound, it ends the session
	c = lineConnOn("not json\n", 1<<20, &noticed, &writes{})
	_, err = c.Read(t.Context())
	is.True(err != nil) // a line that is no message too
	c = lineConnOn(`{"jsonrpc":"2.0","id":1,"result":`+strings.Repeat("[", 1001)+strings.Repeat("]", 1001)+"}\n", 1<<20, &noticed, &writes{})
	_, err = c.Read(t.Context())
	is.True(errors.Is(err, errTooDeep)) // and one nested deeper than go-sdk allows
}

func TestALineConnWritesEachMessageAsOneLineInOneWrite(t *testing.T) {
	is := is.New(t)
	w := &writes{}
	var noticed []string
	c := lineConnOn("", 1<<20, &noticed, w)
	ctx := t.Context()
	is.NoErr(c.Write(ctx, &jsonrpc.Request{ID: mustID(t, 1), Method: "ping"}))
	is.NoErr(c.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized"}))
	is.Equal(len(w.lines), 2)
	for _, line := range w.lines {
		is.True(strings.HasSuffix(line, "}\n")) // one message and its newline
		is.Equal(strings.Count(line, "\n"), 1)  // on one line
		_, err := decodeMessage([]byte(line))
		is.NoErr(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	is.True(errors.Is(c.Write(cancelled, &jsonrpc.Request{Method: "x"}), context.Canceled)) // a write on an ended context
	is.Equal(len(w.lines), 2)
}

func TestAReadWaitingOnAClosedLineConnEndsWithEOF(t *testing.T) {
	is := is.New(t)
	r, w := io.Pipe()
	hook := &noticeHook{}
	// Closing the connection closes its writer, which here is the pipe
	// it reads, as closing a stdio connection ends with its stdout closed.
	c := newLineConn(newMessageReader(r, 1<<20, false, false, slog.Default(), nil), hook, closer{w, r})
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(t.Context())
		read <- err
	}()
	is.NoErr(c.Close())
	is.Equal(<-read, io.EOF)
	is.NoErr(c.Close()) // again: nothing more
}

// closer is a writer whose Close also closes a reader.
type closer struct {
	*io.PipeWriter
	r *io.PipeReader
}

func (c closer) Close() error { _ = c.r.Close(); return c.PipeWriter.Close() }

// mustID is the JSON-RPC id of the number n.
func mustID(t *testing.T, n float64) jsonrpc.ID {
	id, err := jsonrpc.MakeID(n)
	is.New(t).NoErr(err)
	return id
}
