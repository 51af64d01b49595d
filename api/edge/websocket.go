package edge

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// serveWebSocket upgrades and serves one JSON-RPC connection.
func (s *Server) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if !s.track.enter(&s.track.conns) {
		http.Error(w, "mcpflow is shutting down", http.StatusServiceUnavailable)
		return
	}
	defer s.track.conns.Done()
	up := websocket.Upgrader{CheckOrigin: s.checkOrigin, HandshakeTimeout: 10 * time.Second}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade already answered the HTTP request.
	}
	c := &wsConn{
		server: s,
		ws:     ws,
		out:    make(chan reply, s.opts.MaxInFlight+1),
		slots:  make(slots, s.opts.MaxInFlight),
	}
	c.serve(s.base)
}

// wsConn is one WebSocket connection: the reader goroutine (serve) decodes
// frames and starts a goroutine per request; the writer goroutine is the
// only one that writes to the socket. Requests in flight are bounded by
// slots, and out holds at most one reply per slot plus one reader error,
// so a handler never waits for the writer. A request's slot is released
// when the writer takes its reply, before writing it, so a client that has
// read a reply may send another request without being refused.
type wsConn struct {
	server *Server
	ws     *websocket.Conn
	out    chan reply
	slots  slots
}

// reply is an encoded message for the writer; slot reports that it holds
// an in-flight slot, which the writer releases as it takes the reply.
type reply struct {
	data []byte
	slot bool
}

func (c *wsConn) serve(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	var handlers sync.WaitGroup
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.write(ctx)
	}()
	defer func() {
		cancel()
		handlers.Wait()
		<-writerDone
		_ = c.ws.Close()
	}()

	opts := c.server.opts
	c.ws.SetReadLimit(opts.MaxMessageBytes)
	_ = c.ws.SetReadDeadline(time.Now().Add(opts.PongWait))
	c.ws.SetPongHandler(func(string) error {
		return c.ws.SetReadDeadline(time.Now().Add(opts.PongWait))
	})
	for {
		kind, data, err := c.ws.ReadMessage()
		if err != nil {
			if websocket.IsUnexpectedCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) {
				slog.Debug("websocket read", "err", err)
			}
			return
		}
		_ = c.ws.SetReadDeadline(time.Now().Add(opts.PongWait))
		if kind != websocket.TextMessage && kind != websocket.BinaryMessage {
			continue
		}
		c.handleFrame(ctx, jsonrpc.DecodeFrame(data, opts.MaxBatch), &handlers)
	}
}

// handleFrame answers a frame: a single request as soon as it finishes, a
// batch as one array once all its entries have.
func (c *wsConn) handleFrame(ctx context.Context, f jsonrpc.Frame, handlers *sync.WaitGroup) {
	track := &c.server.track
	if !track.enter(&track.requests) {
		c.send(ctx, f.Batch, refuse(f))
		return
	}
	if !f.Batch && len(f.Requests) == 1 {
		req := f.Requests[0]
		if !c.slots.acquire() {
			track.requests.Done()
			if !req.IsNotification() {
				c.send(ctx, false, []jsonrpc.Response{c.server.overloaded(req.ID)})
			}
			return
		}
		handlers.Add(1)
		go func() {
			defer handlers.Done()
			defer track.requests.Done()
			resp, ok := c.server.dispatch(ctx, req)
			if !ok {
				c.slots.release()
				return
			}
			c.sendHolding(ctx, false, []jsonrpc.Response{resp}, true)
		}()
		return
	}
	if len(f.Requests) == 0 {
		track.requests.Done()
		c.send(ctx, f.Batch, f.Rejected)
		return
	}
	handlers.Add(1)
	go func() {
		defer handlers.Done()
		defer track.requests.Done()
		c.send(ctx, f.Batch, c.server.answerFrame(ctx, f, c.slots))
	}()
}

// send queues an encoded reply for the writer.
func (c *wsConn) send(ctx context.Context, batch bool, responses []jsonrpc.Response) {
	c.sendHolding(ctx, batch, responses, false)
}

// sendHolding is send for a reply that holds an in-flight slot (slot true):
// the writer releases it as it takes the reply, or it is released here
// when the reply is dropped.
func (c *wsConn) sendHolding(ctx context.Context, batch bool, responses []jsonrpc.Response, slot bool) {
	data, err := jsonrpc.EncodeReply(batch, responses)
	if err != nil {
		slog.Error("encode reply", "err", err)
	}
	if data == nil {
		if slot {
			c.slots.release()
		}
		return
	}
	// out always has room (see wsConn), so a reply is queued even as the
	// connection closes; in a shutdown the writer flushes it before the
	// goodbye.
	select {
	case c.out <- reply{data: data, slot: slot}:
		return
	default:
	}
	select {
	case c.out <- reply{data: data, slot: slot}:
	case <-ctx.Done():
		if slot {
			c.slots.release()
		}
	}
}

// write is the connection's only writer: replies, and pings while idle.
func (c *wsConn) write(ctx context.Context) {
	opts := c.server.opts
	ping := time.NewTicker(opts.PingInterval)
	defer ping.Stop()
	for {
		select {
		case r := <-c.out:
			if !c.writeReply(r) {
				return
			}
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(opts.WriteTimeout)); err != nil {
				_ = c.ws.Close()
				return
			}
		case <-ctx.Done():
			// In a shutdown, replies already queued go out first: it has
			// let their requests finish. Say goodbye, then close: that also
			// unblocks the reader when the server, not the peer, ends the
			// connection.
			for flushed := !c.server.track.isClosed(); !flushed; {
				select {
				case r := <-c.out:
					if !c.writeReply(r) {
						return
					}
				default:
					flushed = true
				}
			}
			_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "server closing"), time.Now().Add(time.Second))
			_ = c.ws.Close()
			return
		}
	}
}

// writeReply writes one queued reply; on failure it closes the socket
// (which unblocks the reader) and reports false.
func (c *wsConn) writeReply(r reply) bool {
	if r.slot {
		c.slots.release() // before the peer can see the reply
	}
	_ = c.ws.SetWriteDeadline(time.Now().Add(c.server.opts.WriteTimeout))
	if err := c.ws.WriteMessage(websocket.TextMessage, r.data); err != nil {
		_ = c.ws.Close()
		return false
	}
	return true
}
