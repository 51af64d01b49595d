package edge

import (
	"context"
	"errors"
	"sync"
)

// ErrOutboundFull is returned by [Conn.TryNotify] when the connection's
// outbound queue is at its bound.
var ErrOutboundFull = errors.New("edge: outbound queue full")

// ErrConnClosed is returned when a notification is pushed to a connection
// that has ended.
var ErrConnClosed = errors.New("edge: connection closed")

// outbox is a WebSocket connection's outbound queue: messages wait here
// for the connection's one writer. It is bounded in messages and bytes,
// not by refusing messages (a reply is never dropped while the connection
// lives) but by the reader, which stops reading while the outbox is full
// (waitRoom): the backpressure reaches the client through TCP.
//
// bytes counts what was produced and not yet written: the messages
// queued, and the encoded answers of batches still running (reserve), so
// that half-done batches count too.
type outbox struct {
	maxMsgs  int
	maxBytes int64

	mu     sync.Mutex
	queue  [][]byte
	count  int   // messages queued or being written
	bytes  int64 // bytes reserved, queued or being written
	closed bool
	ready  chan struct{} // one token: a message was queued
	// room is closed when the outbox drops under its bounds while someone
	// waits (waiters > 0), then replaced.
	room    chan struct{}
	waiters int
}

func newOutbox(maxMsgs int, maxBytes int64) *outbox {
	return &outbox{maxMsgs: maxMsgs, maxBytes: maxBytes, ready: make(chan struct{}, 1), room: make(chan struct{})}
}

// fullLocked reports whether either bound is reached.
func (o *outbox) fullLocked() bool { return o.count >= o.maxMsgs || o.bytes >= o.maxBytes }

// reserve counts n bytes produced for a message not queued yet.
func (o *outbox) reserve(n int) {
	o.mu.Lock()
	o.bytes += int64(n)
	o.mu.Unlock()
}

// push queues data for the writer, turning reserved bytes into queued
// ones, and wakes the writer; a nil data only gives the reservation back.
// After close it drops data and reports false.
func (o *outbox) push(data []byte, reserved int) bool {
	if !o.pushQuiet(data, reserved) {
		return false
	}
	if data != nil {
		o.wake()
	}
	return true
}

// pushQuiet is push without waking the writer: the caller writes what is
// queued itself (Conn.reply), or wakes the writer.
func (o *outbox) pushQuiet(data []byte, reserved int) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	o.bytes -= int64(reserved)
	if data == nil {
		o.roomLocked()
		return true
	}
	o.queueLocked(data)
	return true
}

// queueLocked appends data.
func (o *outbox) queueLocked(data []byte) {
	o.queue = append(o.queue, data)
	o.count++
	o.bytes += int64(len(data))
}

// wake tells the writer that a message was queued.
func (o *outbox) wake() {
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

// tryPush queues data unless the outbox is full or closed.
func (o *outbox) tryPush(data []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.closed:
		return ErrConnClosed
	case o.fullLocked():
		return ErrOutboundFull
	}
	o.queueLocked(data)
	o.wake()
	return nil
}

// pop takes the oldest queued message for the writer, which calls written
// once it is on the wire.
func (o *outbox) pop() ([]byte, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.queue) == 0 {
		return nil, false
	}
	data := o.queue[0]
	o.queue[0] = nil
	o.queue = o.queue[1:]
	if len(o.queue) == 0 {
		o.queue = nil // let the backing array go
	}
	return data, true
}

// written accounts for a message the writer has sent.
func (o *outbox) written(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.count--
	o.bytes -= int64(n)
	o.roomLocked()
}

// roomLocked wakes whoever waits for room, if there is some now.
func (o *outbox) roomLocked() {
	if o.waiters > 0 && !o.fullLocked() {
		close(o.room)
		o.room = make(chan struct{})
	}
}

// waitRoom returns once the outbox is under its bounds, or with ctx's
// error once ctx ends.
func (o *outbox) waitRoom(ctx context.Context) error {
	for {
		o.mu.Lock()
		if !o.fullLocked() {
			o.mu.Unlock()
			return nil
		}
		room := o.room
		o.waiters++
		o.mu.Unlock()
		var err error
		select {
		case <-room:
		case <-ctx.Done():
			err = ctx.Err()
		}
		o.mu.Lock()
		o.waiters--
		o.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// close drops what is queued; later pushes are dropped too.
func (o *outbox) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	o.queue = nil
}

// stats returns the messages and bytes not yet written (for tests).
func (o *outbox) stats() (int, int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.count, o.bytes
}
