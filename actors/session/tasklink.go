package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// taskLink sends the requests of MCP tasks, which go-sdk v1.8.0 has no
// API for, to one upstream session: a stdio session's side channel
// (sideConn), or POSTs of mcpflow's own to a streamable HTTP session
// (httpLink). A JSON-RPC error answer is a *jsonrpc.Error in the error's
// chain.
type taskLink interface {
	call(ctx context.Context, method string, params any) (json.RawMessage, error)
	// waker wakes the pollers of the tasks whose status notifications
	// come through the link.
	waker() *taskWake
}

// taskLinker is implemented by the transports whose sessions can carry
// tasks: the link to the session upstream names sessionID (HTTP; "" for
// none), which negotiated version.
type taskLinker interface {
	taskLink(sessionID, version string) (taskLink, error)
}

// taskLink implements taskLinker: the side channel of the connection
// Connect made.
func (t *stdioTransport) taskLink(string, string) (taskLink, error) {
	if t.side == nil {
		return nil, errors.New("the stdio session is not connected")
	}
	return t.side, nil
}

// taskLink implements taskLinker: POSTs to the endpoint through the
// session's own HTTP client (its credentials, headers and answer bound).
func (t *httpTransport) taskLink(sessionID, version string) (taskLink, error) {
	return &httpLink{client: t.HTTPClient, url: t.Endpoint, session: sessionID, version: version, wake: &taskWake{}}, nil
}

// errTaskSessionGone is an HTTP session the server no longer knows (it
// answered 404, or 400, to a request that names it).
var errTaskSessionGone = errors.New("the server no longer knows the session")

// httpLink sends task requests to a streamable HTTP session as POSTs of
// its own, under the session's id and protocol version: those of the
// session open now, or of one mcpflow no longer holds (a task created
// before a restart), which the server may still keep. An answer comes as
// JSON or as an event stream. A request of the server's on that stream
// (an elicitation while a task waits for input, sent on the stream of
// tasks/result) goes to ask, which hands it to the run of the link's
// call, and its answer is POSTed back; without ask (a catalog's link) it
// is refused with an error answer, and logged: go-sdk, which answers the
// session's others, never sees this stream. A notification on it is
// logged at debug, but a task status one wakes the poller of its task.
type httpLink struct {
	client  *http.Client
	url     string
	session string
	version string
	wake    *taskWake
	// ask answers a request of the server's (Actor.callAsker); set
	// before the link's first request.
	ask func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// linkIDs numbers the requests of every httpLink.
var linkIDs atomic.Uint64

func (l *httpLink) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%s: encode params: %w", method, err)
	}
	id, _ := jsonrpc.MakeID(sideIDPrefix + strconv.FormatUint(linkIDs.Add(1), 10))
	resp, err := l.post(ctx, &jsonrpc.Request{ID: id, Method: method, Params: raw})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	answer, err := l.answer(ctx, resp, id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if answer.Error != nil {
		return nil, fmt.Errorf("%s: %w", method, answer.Error)
	}
	return answer.Result, nil
}

func (l *httpLink) waker() *taskWake { return l.wake }

// post sends msg; a 404 or 400 to a request of a session is
// errTaskSessionGone, any other status outside 2xx an error.
func (l *httpLink) post(ctx context.Context, msg jsonrpc.Message) (*http.Response, error) {
	body, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if l.version != "" {
		req.Header.Set("Mcp-Protocol-Version", l.version)
	}
	if l.session != "" {
		req.Header.Set("Mcp-Session-Id", l.session)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, err
	}
	switch {
	case l.session != "" && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusBadRequest):
		resp.Body.Close()
		return nil, fmt.Errorf("%w (HTTP %d)", errTaskSessionGone, resp.StatusCode)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return resp, nil
}

// answer reads the answer to request id from resp: its JSON body, or the
// events of its stream up to the answer.
func (l *httpLink) answer(ctx context.Context, resp *http.Response, id jsonrpc.ID) (*jsonrpc.Response, error) {
	if mediaType(resp.Header) != "text/event-stream" {
		data, err := io.ReadAll(resp.Body) // bounded by resultBound
		if err != nil {
			return nil, err
		}
		return asAnswer(data, id)
	}
	events := bufio.NewReader(resp.Body)
	for {
		data, err := nextEvent(events)
		if len(data) > 0 {
			msg, derr := decodeMessage(data)
			if derr != nil {
				return nil, fmt.Errorf("decode an event of the answer: %w", derr)
			}
			if a, ok := msg.(*jsonrpc.Response); ok && a.ID == id {
				return a, nil
			}
			l.other(ctx, msg)
		}
		if err != nil {
			return nil, fmt.Errorf("the answer's stream ended before the answer: %w", err)
		}
	}
}

// asAnswer decodes a JSON body as the answer to request id.
func asAnswer(data []byte, id jsonrpc.ID) (*jsonrpc.Response, error) {
	msg, err := decodeMessage(data)
	if err != nil {
		return nil, fmt.Errorf("decode the answer: %w", err)
	}
	a, ok := msg.(*jsonrpc.Response)
	if !ok || a.ID != id {
		return nil, errors.New("the body is no answer to the request")
	}
	return a, nil
}

// nextEvent reads one event of a stream and returns its data (its data
// lines joined by newlines); nil data for an event without any. Each
// event is bounded by resultBound.
func nextEvent(r *bufio.Reader) ([]byte, error) {
	var data []byte
	for {
		line, err := r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, strings.TrimPrefix(v, " ")...)
		}
		if err != nil || line == "" {
			return data, err
		}
	}
}

// other handles a message of the stream that is not the answer.
func (l *httpLink) other(ctx context.Context, msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	switch {
	case !ok: // an answer to some other request: not ours to have
		slog.Debug("an answer to another request on a task request's stream, dropped")
	case req.Method == methodTaskStatus:
		l.wake.status(req.Params)
	case req.Method == methodProgress || req.Method == methodLog:
		// taken already, as the stream was read (resultBound's messageReader)
	case !req.IsCall():
		slog.Debug("an upstream notification on a task request's stream, dropped", "method", req.Method)
	case l.ask != nil:
		l.answerAsked(ctx, req)
	default:
		l.refuse(ctx, req)
	}
}

// answerAsked has ask answer a request of the server's, and POSTs the
// answer back. It blocks the stream's reading meanwhile: the server
// waits for the answer before it goes on with its task.
func (l *httpLink) answerAsked(ctx context.Context, req *jsonrpc.Request) {
	result, err := l.ask(ctx, req.Method, req.Params)
	answer := &jsonrpc.Response{ID: req.ID, Result: result}
	if err != nil {
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			rpcErr = &jsonrpc.Error{Code: codeUnhanded, Message: err.Error()}
		}
		answer = &jsonrpc.Response{ID: req.ID, Error: rpcErr}
	}
	l.reply(ctx, req.Method, answer)
}

// reply POSTs answer to a request of the server's.
func (l *httpLink) reply(ctx context.Context, method string, answer *jsonrpc.Response) {
	resp, err := l.post(ctx, answer)
	if err != nil {
		slog.Warn("the answer to an upstream request did not reach the server", "method", method, "err", err)
		return
	}
	resp.Body.Close()
}

// refuse answers a request of the server's with an error: nothing here
// can answer it.
func (l *httpLink) refuse(ctx context.Context, req *jsonrpc.Request) {
	slog.Warn("refused an upstream request on a task's stream: mcpflow answers the server's requests on its session, not on a task's own request", "method", req.Method)
	l.reply(ctx, req.Method, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
		Message: fmt.Sprintf("mcpflow cannot answer %s on this stream (a task request of its own)", req.Method)}})
}

// taskWake wakes the poller of a task when its server says its status
// changed (notifications/tasks/status), so that it need not wait for its
// next poll. A task without a poller waiting is no news: it is dropped.
type taskWake struct {
	mu      sync.Mutex
	waiting map[string]chan struct{}
}

// watch returns the channel that wakes taskID's poller, and its release.
func (w *taskWake) watch(taskID string) (<-chan struct{}, func()) {
	if w == nil {
		return nil, func() {}
	}
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	if w.waiting == nil {
		w.waiting = map[string]chan struct{}{}
	}
	w.waiting[taskID] = ch
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		if w.waiting[taskID] == ch {
			delete(w.waiting, taskID)
		}
		w.mu.Unlock()
	}
}

// status wakes the poller of the task a status notification names.
func (w *taskWake) status(params json.RawMessage) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if w == nil || json.Unmarshal(params, &p) != nil {
		return
	}
	w.mu.Lock()
	ch := w.waiting[p.TaskID]
	w.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default: // woken already
		}
	}
}
