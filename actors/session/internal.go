package session

import "time"

// Internal messages, sent by the actor's own goroutines and timers. They
// carry the connect attempt they belong to: a message of an earlier
// attempt is stale.
type (
	// slotGranted: the limiter gave attempt its connect slot.
	slotGranted struct{ attempt int }
	// connected: attempt's connect ended, with the session handed over
	// and the generation its tenure gave it (0 without one), or failed.
	connected struct {
		attempt    int
		hand       *handoff
		generation int64
		err        error
	}
	// closed: ClientSession.Wait of attempt's session returned.
	closed struct {
		attempt int
		err     error
	}
	// peerGone: attempt's transport saw its peer go (certain: a stdio
	// server exited), or maybe go (its notification stream ended).
	peerGone struct {
		attempt int
		err     error
		certain bool
	}
	// callDone: a call or read returned; result holds its outcome and
	// output, err how it failed (the error answered), rpcErr the
	// request's own error (for classify).
	callDone struct {
		run    uint64
		result ToolResult
		err    error
		rpcErr error
	}
	listDone struct {
		run    uint64
		result CatalogListed
		rpcErr error
	}
	// listChanged: attempt's server announced that list (tools,
	// resources or prompts) changed; relistDue ends the debounce window.
	listChanged struct {
		attempt int
		list    string
	}
	relistDue struct{ attempt int }
	// retryDue: the backoff (or probe interval) armed as token passed.
	retryDue struct{ token int }
	// keepaliveDue: time to ping attempt's session; pinged: its answer,
	// or its failure (missed: no answer within the ping timeout; again:
	// the second try after the transport failed).
	keepaliveDue struct{ attempt int }
	pinged       struct {
		attempt int
		err     error
		missed  bool
		starved time.Duration // how much the process's starvation added to the timeout
		again   bool
	}
	// catalogStale re-lists the catalog once it is CatalogMaxAge old.
	catalogStale struct{ attempt int }
	// sweep fails queued work whose deadline has passed.
	sweep struct{}
)
