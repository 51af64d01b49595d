package edge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// handshakeTimeout bounds the WebSocket upgrade's reply.
const handshakeTimeout = 10 * time.Second

// serveWebSocket upgrades and serves one JSON-RPC connection.
func (s *Server) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if !s.track.enter(&s.track.conns) {
		http.Error(w, "mcpflow is shutting down", http.StatusServiceUnavailable)
		return
	}
	defer s.track.conns.Done()
	addr := clientAddr(r)
	if _, ok := s.clients.admit(addr); !ok {
		s.refuseClient(w, addr)
		return
	}
	defer s.clients.leave(addr)
	caller, ok := s.admit(w, r)
	if !ok {
		return
	}
	// admit checked the Origin; a browser that sent its token as a
	// subprotocol is answered with access.Subprotocol, never the token.
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }, HandshakeTimeout: handshakeTimeout,
		Subprotocols: []string{access.Subprotocol}}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade already answered the HTTP request.
	}
	defer s.opts.Metrics.WebSocketOpened()()
	c := &Conn{
		server: s,
		caller: caller,
		ws:     ws,
		out:    newOutbox(s.opts.MaxOutboundMessages, s.opts.MaxOutboundBytes),
		slots:  make(slots, s.opts.MaxInFlight),
	}
	c.ctx, c.cancel = context.WithCancelCause(s.base)
	c.ctx = context.WithValue(c.ctx, connKey{}, c)
	c.serve()
}

// Conn is one WebSocket connection. Its goroutines are the reader (serve:
// it decodes frames and starts requests), the writer (queued messages and
// pings) and at most MaxInFlight request goroutines; a request whose reply
// finds no one writing writes the queue itself (reply), one wake fewer
// than the writer's. Whatever ends the connection (a read error, a failed
// or late write, a missing pong, the peer's close, Close or Shutdown)
// cancels its context: every goroutine of the connection then returns and
// queued messages are dropped.
//
// Handlers reach the connection their request arrived on through
// [ConnFrom], to push notifications through the same writer.
type Conn struct {
	server   *Server
	caller   access.Principal
	ws       *websocket.Conn
	ctx      context.Context
	cancel   context.CancelCauseFunc
	out      *outbox
	slots    slots
	handlers sync.WaitGroup
	// wmu is held by whoever writes messages to the socket: the writer, or
	// a request writing its own reply (reply). Pings need not hold it.
	wmu sync.Mutex
}

type connKey struct{}

// ConnFrom returns the WebSocket connection a request arrived on, from its
// handler's context; nil over /rpc.
func ConnFrom(ctx context.Context) *Conn {
	c, _ := ctx.Value(connKey{}).(*Conn)
	return c
}

// Done is closed once the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.ctx.Done() }

// MaxSubscriptions is the number of subscriptions the connection may hold.
func (c *Conn) MaxSubscriptions() int { return c.server.opts.MaxSubscriptions }

// Notify queues a JSON-RPC notification for the connection's writer. While
// the outbound queue is full it waits, as replies do, until there is room
// or ctx or the connection ends (ErrConnClosed).
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	data, err := jsonrpc.EncodeNotification(method, params)
	if err != nil {
		return err
	}
	for {
		err := c.out.tryPush(data)
		if !errors.Is(err, ErrOutboundFull) {
			return err
		}
		wait, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(c.ctx, cancel)
		err = c.out.waitRoom(wait)
		stop()
		cancel()
		switch {
		case c.ctx.Err() != nil:
			return ErrConnClosed
		case err != nil:
			return fmt.Errorf("edge: notify %s: %w", method, err)
		}
	}
}

// TryNotify queues a JSON-RPC notification unless the outbound queue is
// full (ErrOutboundFull) or the connection has ended (ErrConnClosed); it
// never waits, for pushers that must not be slowed by one slow client.
func (c *Conn) TryNotify(method string, params any) error {
	data, err := jsonrpc.EncodeNotification(method, params)
	if err != nil {
		return err
	}
	if c.ctx.Err() != nil {
		return ErrConnClosed
	}
	return c.out.tryPush(data)
}

// keepAlive is how long the reader waits for anything from the peer: a
// ping interval for the next ping to go out, plus the pong wait.
func (c *Conn) keepAlive() time.Duration {
	return c.server.opts.PingInterval + c.server.opts.PongWait
}

// serve is the reader. It returns once every goroutine of the connection
// has.
func (c *Conn) serve() {
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.write()
	}()
	defer func() {
		c.cancel(errors.New("reader ended"))
		c.handlers.Wait()
		<-writerDone
		c.out.close()
		_ = c.ws.Close()
		slog.Debug("websocket closed", "remote", c.ws.RemoteAddr().String(), "cause", context.Cause(c.ctx))
	}()

	opts := c.server.opts
	c.ws.SetReadLimit(opts.MaxMessageBytes)
	c.ws.SetPongHandler(func(string) error {
		return c.ws.SetReadDeadline(time.Now().Add(c.keepAlive()))
	})
	for {
		// Backpressure: a client that does not read its replies is not read.
		if err := c.out.waitRoom(c.ctx); err != nil {
			return
		}
		_ = c.ws.SetReadDeadline(time.Now().Add(c.keepAlive()))
		kind, data, err := c.ws.ReadMessage()
		if err != nil {
			if websocket.IsUnexpectedCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) {
				slog.Debug("websocket read", "err", err)
			}
			c.cancel(fmt.Errorf("read: %w", err))
			return
		}
		if kind != websocket.TextMessage && kind != websocket.BinaryMessage {
			continue
		}
		c.handleFrame(data)
	}
}

// handleFrame answers a frame: a single request as soon as it finishes, a
// batch as one array once all its entries have. It waits (not reading
// further) while no in-flight slot is free.
func (c *Conn) handleFrame(data []byte) {
	deadline := time.Now().Add(c.server.opts.RequestTimeout)
	f := jsonrpc.DecodeFrame(data, c.server.opts.MaxBatch)
	track := &c.server.track
	if !track.enter(&track.requests) {
		reply, err := jsonrpc.EncodeReply(f.Batch, refuse(f))
		if err != nil {
			slog.Error("encode reply", "err", err)
		}
		c.out.push(reply, 0)
		return
	}
	job := frameJob{
		ctx: c.ctx, deadline: deadline, inFlight: c.slots, scope: "on this connection", caller: c.caller, wg: &c.handlers, reserve: c.out.reserve,
		deliver: func(data []byte, reserved int) {
			c.reply(data, reserved)
			track.requests.Done()
		},
	}
	if hook := c.server.opts.RequestContext; hook != nil {
		job.prepare = func(ctx context.Context) (context.Context, func()) { return hook(ctx, c) }
	}
	c.server.answer(job, f)
}

// write is the connection's writer: queued messages, unless a request
// writes them (reply), and pings on every PingInterval.
func (c *Conn) write() {
	opts := c.server.opts
	ping := time.NewTicker(opts.PingInterval)
	defer ping.Stop()
	defer func() { _ = c.ws.Close() }() // also unblocks the reader
	for {
		if c.ctx.Err() != nil {
			c.goodbye()
			return
		}
		c.wmu.Lock()
		err := c.flush()
		c.wmu.Unlock()
		if err != nil {
			c.cancel(fmt.Errorf("write: %w", err))
			return
		}
		select {
		case <-c.out.ready:
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(opts.WriteTimeout)); err != nil {
				c.cancel(fmt.Errorf("ping: %w", err))
				return
			}
		case <-c.ctx.Done():
		}
	}
}

// reply queues a request's reply (data; nil gives its reservation back)
// and, when no one is writing, writes the queue itself rather than waking
// the writer; else the writer writes it.
func (c *Conn) reply(data []byte, reserved int) {
	if !c.out.pushQuiet(data, reserved) || data == nil {
		return
	}
	if !c.wmu.TryLock() {
		c.out.wake() // the writer, or a request, is writing: it sees ours, or wakes again
		return
	}
	err := c.flush()
	c.wmu.Unlock()
	if err != nil {
		c.cancel(fmt.Errorf("write: %w", err))
		c.out.wake() // the writer ends the connection
	}
}

// flush writes the queued messages, oldest first, while the connection
// lives; the caller holds wmu.
func (c *Conn) flush() error {
	for c.ctx.Err() == nil {
		data, ok := c.out.pop()
		if !ok {
			return nil
		}
		if err := c.writeMessage(data); err != nil {
			return err
		}
	}
	return nil
}

// writeMessage writes one message within WriteTimeout.
func (c *Conn) writeMessage(data []byte) error {
	_ = c.ws.SetWriteDeadline(time.Now().Add(c.server.opts.WriteTimeout))
	if err := c.ws.WriteMessage(websocket.TextMessage, data); err != nil {
		return err
	}
	c.out.written(len(data))
	return nil
}

// goodbye ends a connection whose context was cancelled. When the server,
// not the peer, ends it (Close or Shutdown) it says so with close 1001;
// in a shutdown, which has let the requests in flight finish, the replies
// already queued go out first.
func (c *Conn) goodbye() {
	if c.server.base.Err() == nil {
		return // the peer or the connection failed: nothing to say
	}
	if c.server.track.isClosed() {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		for {
			data, ok := c.out.pop()
			if !ok {
				break
			}
			if c.writeMessage(data) != nil {
				return
			}
		}
	}
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "server closing"), time.Now().Add(time.Second))
}
