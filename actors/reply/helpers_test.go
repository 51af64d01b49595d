package reply_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"
)

// patience bounds every wait that only a broken reply address would reach.
const patience = 5 * time.Second

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

// returnsAtOnce runs send and fails the test if it blocks.
func returnsAtOnce(t *testing.T, send func()) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		send()
	}()
	select {
	case <-done:
	case <-time.After(patience):
		is.Fail() // the sender never blocks
	}
}
