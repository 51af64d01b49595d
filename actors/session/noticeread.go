package session

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call's notifications/progress and notifications/message are taken
// where the session's messages are read, in the order they came, not
// from go-sdk's handlers: go-sdk hands a notification to its handler on
// a goroutine of its own and a call's answer to the caller on another,
// so that a report sent right before the answer could reach the actor
// after it. Read in order, each report is in the actor's notices before
// the reader even reads the answer, and the actor takes its notices
// before each answer (onCallDone): a call's reports always precede its
// result.
//
// The stdio transport and the HTTP transports (stdio lines, the events
// of event streams) hand each message their messageReader reads to a
// noticeHook (they are noticeHookers), as does the lineConn the session
// makes for a LineStream; any other transport (the
// in-memory ones of the tests) has its connection wrapped in a
// noticeConn, which sees each message go-sdk reads. A wrapped streamable
// HTTP connection would hide from go-sdk the method it tells the
// connection with that the session is initialized, hence the reader.

// noticeHooker is implemented by the transports whose reader hands the
// notifications it reads to a noticeHook.
type noticeHooker interface {
	// hookNotices arranges for notice to get each progress or log
	// notification read; it is called before Connect, and notice must
	// not block.
	hookNotices(notice func(method string, params json.RawMessage))
}

// Methods of the notifications a noticeHook takes.
const (
	methodProgress = "notifications/progress"
	methodLog      = "notifications/message"
)

// noticeHook is where a transport's reader hands the progress and log
// notifications it reads; its zero value hands them to nobody. Safe for
// concurrent use (an HTTP session reads several streams at once).
type noticeHook struct {
	mu     sync.Mutex
	notice func(method string, params json.RawMessage)
}

func (h *noticeHook) hookNotices(notice func(method string, params json.RawMessage)) {
	h.mu.Lock()
	h.notice = notice
	h.mu.Unlock()
}

// observe hands msg, one JSON-RPC message as it came, to the hook's
// notice if it is a progress or log notification. Only a message that
// names one of their methods is decoded (a second time: go-sdk decodes
// it too), so that a large answer is scanned once more, never decoded
// twice.
func (h *noticeHook) observe(msg []byte) {
	if h == nil || !bytes.Contains(msg, []byte(methodProgress)) && !bytes.Contains(msg, []byte(methodLog)) {
		return
	}
	m, err := decodeMessage(msg)
	if err != nil {
		return // go-sdk reads it and says what is wrong with it
	}
	h.hand(m)
}

// hand hands m to the hook's notice if it is a progress or log
// notification.
func (h *noticeHook) hand(m jsonrpc.Message) {
	req, ok := m.(*jsonrpc.Request)
	if !ok || req.IsCall() || req.Method != methodProgress && req.Method != methodLog {
		return
	}
	h.mu.Lock()
	notice := h.notice
	h.mu.Unlock()
	if notice != nil {
		notice(req.Method, req.Params)
	}
}

// eventData is the data of an event of an event stream, as its reader
// joins it: each data line's value after "data:" and one space, a newline
// between two.
func eventData(event []byte) []byte {
	var data []byte
	lines := 0
	for line := range bytes.Lines(event) {
		value, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
		if !ok {
			continue
		}
		if lines > 0 {
			data = append(data, '\n')
		}
		data = append(data, bytes.TrimPrefix(value, []byte{' '})...)
		lines++
	}
	return data
}

// noticeTransport connects its Transport with its connection wrapped in
// a noticeConn.
type noticeTransport struct {
	mcp.Transport
	hook *noticeHook
}

func (t noticeTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return noticeConn{Connection: c, hook: t.hook}, nil
}

// noticeConn hands each progress or log notification go-sdk reads to its
// hook before go-sdk gets it.
type noticeConn struct {
	mcp.Connection
	hook *noticeHook
}

func (c noticeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		c.hook.hand(m)
	}
	return m, err
}

// observeNotices makes t hand the progress and log notifications of
// attempt's session to the actor's notices as they are read, and returns
// the transport to connect with: t itself when it hooks them, else t
// with its connection wrapped.
func (a *Actor) observeNotices(t mcp.Transport, attempt int) mcp.Transport {
	n := a.notices
	notice := func(method string, params json.RawMessage) {
		switch method {
		case methodProgress:
			var p mcp.ProgressNotificationParams
			if err := json.Unmarshal(params, &p); err != nil {
				n.malformed(noticeProgress)
				return
			}
			n.addProgress(attempt, &p)
		case methodLog:
			var p mcp.LoggingMessageParams
			if err := json.Unmarshal(params, &p); err != nil {
				n.malformed(noticeLog)
				return
			}
			n.addLog(attempt, &p)
		}
	}
	if s, ok := t.(LineStream); ok {
		t = &streamTransport{stream: s, limit: resultLimit(a.conn, a.opts.MaxResultBytes), log: slog.With("connection", a.conn.ID)}
	}
	if h, ok := t.(noticeHooker); ok {
		h.hookNotices(notice)
		return t
	}
	hook := &noticeHook{}
	hook.hookNotices(notice)
	return noticeTransport{Transport: t, hook: hook}
}
