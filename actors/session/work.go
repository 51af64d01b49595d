package session

import "time"

// work is a call, a resource read or a catalog listing waiting for the
// session.
type work struct {
	call *CallTool
	read *ReadResource
	list *ListCatalog
	// replayed is set on work sent again after the server refused it
	// without running it; it is never sent a third time.
	replayed bool
}

func (w work) deadline() time.Time {
	switch {
	case w.call != nil:
		return w.call.Deadline
	case w.read != nil:
		return w.read.Deadline
	}
	return w.list.Deadline
}

// owner is who made a call or read, "" for a listing.
func (w work) owner() string {
	switch {
	case w.call != nil:
		return w.call.Owner
	case w.read != nil:
		return w.read.Owner
	}
	return ""
}

// answer replies to a call or read.
func (w work) answer(r ToolResult) {
	if w.call != nil {
		w.call.Reply(r)
	} else {
		w.read.Reply(r)
	}
}

func (w work) fail(err error) {
	switch {
	case w.call != nil:
		w.call.Reply(ToolResult{CorrelationID: w.call.CorrelationID, Err: err})
		return
	case w.read != nil:
		w.read.Reply(ToolResult{CorrelationID: w.read.CorrelationID, Err: err})
		return
	}
	if w.list.Reply != nil { // the actor's own re-list has no reply address
		w.list.Reply(CatalogListed{Err: err})
	}
}

// what names w in errors.
func (w work) what() string {
	switch {
	case w.call != nil:
		return "the call to " + w.call.Tool
	case w.read != nil:
		return "the read of " + w.read.URI
	}
	return "the catalog listing"
}

func correlationOf(w work) uint64 {
	if w.call != nil {
		return w.call.CorrelationID
	}
	return w.read.CorrelationID
}
