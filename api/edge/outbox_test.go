package edge

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestOutboxCountsWhatIsNotWrittenAndWakesTheReader(t *testing.T) {
	is := is.New(t)
	o := newOutbox(2, 100)
	ctx := context.Background()
	is.NoErr(o.waitRoom(ctx)) // empty: room at once

	o.reserve(60) // a batch entry's answer, its batch still running
	o.reserve(50)
	n, b := o.stats()
	is.Equal(n, 0)
	is.Equal(b, int64(110)) // reserved bytes count: over the byte bound
	is.True(errors.Is(o.tryPush([]byte("x")), ErrOutboundFull))

	room := make(chan error, 1)
	go func() { room <- o.waitRoom(ctx) }()
	is.True(o.push(make([]byte, 112), 110)) // the joined batch reply replaces its reservations
	n, b = o.stats()
	is.Equal(n, 1)
	is.Equal(b, int64(112))
	data, ok := o.pop()
	is.True(ok)
	is.Equal(len(data), 112)
	o.written(len(data))
	select {
	case err := <-room:
		is.NoErr(err) // the reader was woken by the write
	case <-time.After(5 * time.Second):
		is.Fail() // the waiting reader is woken
	}

	is.NoErr(o.tryPush([]byte("a")))
	is.NoErr(o.tryPush([]byte("b")))
	is.True(errors.Is(o.tryPush([]byte("c")), ErrOutboundFull)) // the message bound
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	is.True(errors.Is(o.waitRoom(cctx), context.Canceled)) // a full outbox waits only as long as ctx

	o.close()
	_, ok = o.pop()
	is.True(!ok)                     // queued messages are dropped
	is.True(!o.push([]byte("d"), 0)) // and later ones too
	is.True(errors.Is(o.tryPush([]byte("e")), ErrConnClosed))
}
