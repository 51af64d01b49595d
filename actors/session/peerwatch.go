package session

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"
)

// peerWatcher is implemented by the transports that tell, from a
// goroutine they run anyway, that their peer may be gone: a stdio server
// exited (certain), an HTTP notification stream ended (maybe: go-sdk
// reconnects a stream a proxy cut). A session on such a transport needs
// no goroutine of its own blocked in ClientSession.Wait, which an idle
// session would keep for its whole life; on any other transport the actor
// still waits that way.
type peerWatcher interface {
	// watchPeer arranges for gone to be called whenever the peer may be
	// gone; it is called before Connect, and gone must not block.
	watchPeer(gone func(err error, certain bool))
}

// peerHook is where a transport reports its peer gone; its zero value
// reports to nobody. Safe for concurrent use.
type peerHook struct {
	mu   sync.Mutex
	gone func(err error, certain bool)
}

func (h *peerHook) watchPeer(gone func(err error, certain bool)) {
	h.mu.Lock()
	h.gone = gone
	h.mu.Unlock()
}

// report tells the watcher, if any.
func (h *peerHook) report(err error, certain bool) {
	h.mu.Lock()
	gone := h.gone
	h.mu.Unlock()
	if gone != nil {
		gone(err, certain)
	}
}

// watchStream makes resp's body report to hook when it ends, if resp is
// an event stream a GET opened: the HTTP session's standing notification
// stream (streamable HTTP), or the whole session (HTTP+SSE). A stream
// ends when the server closes it or goes away, and when the session is
// closed (the actor then ignores the report).
func watchStream(r *http.Request, resp *http.Response, hook *peerHook) {
	if r.Method != http.MethodGet || resp.StatusCode != http.StatusOK {
		return
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "text/event-stream" {
		return
	}
	resp.Body = &streamBody{ReadCloser: resp.Body, hook: hook}
}

// watchReopen reports to hook a GET of the session's that got no event
// stream: go-sdk reopens the notification stream after it ended, and
// when those GETs fail it gives up and fails the session in silence, a
// dozen seconds later (five tries, backing off from a second). A server
// that died between the stream's end and its reopening is then noticed
// at once, by the ping the report sends, not at the next keepalive or
// call. A 405 is a server with no standing stream, which go-sdk accepts;
// a GET the session's own close cancelled says nothing of the peer.
func watchReopen(r *http.Request, resp *http.Response, err error, hook *peerHook) {
	switch {
	case err != nil && r.Context().Err() == nil:
		if u, ok := errors.AsType[*url.Error](err); ok {
			err = u.Err // without the URL, whose query may hold a secret
		}
		hook.report(fmt.Errorf("reopening the notification stream: %w", err), false)
	case err == nil && resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusMethodNotAllowed:
		hook.report(fmt.Errorf("reopening the notification stream: the server answered %s", resp.Status), false)
	}
}

// streamBody is an event stream's body that reports its end once.
type streamBody struct {
	io.ReadCloser
	hook *peerHook
	once sync.Once
}

func (b *streamBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.once.Do(func() {
			if errors.Is(err, io.EOF) {
				err = errors.New("the server ended the notification stream")
			}
			b.hook.report(err, false)
		})
	}
	return n, err
}
