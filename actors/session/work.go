package session

import (
	"time"

	"github.com/mcpflow/mcpflow/actors/reply"
)

// work is a call, a resource read or a catalog listing waiting for the
// session.
type work struct {
	call *CallTool
	read *ReadResource
	// prompt is a prompts/get.
	prompt *GetPrompt
	// complete is a completion/complete.
	complete *Complete
	list     *ListCatalog
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
	case w.prompt != nil:
		return w.prompt.Deadline
	case w.complete != nil:
		return w.complete.Deadline
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
	case w.prompt != nil:
		return w.prompt.Owner
	case w.complete != nil:
		return w.complete.Owner
	}
	return ""
}

// reports reports whether w's caller takes its progress and logs.
func (w work) reports() bool {
	switch {
	case w.call != nil:
		return w.call.Reports
	case w.read != nil:
		return w.read.Reports
	}
	return false
}

// replyTo is where w is answered.
func (w work) replyTo() reply.Address {
	switch {
	case w.call != nil:
		return w.call.Reply
	case w.read != nil:
		return w.read.Reply
	case w.prompt != nil:
		return w.prompt.Reply
	case w.complete != nil:
		return w.complete.Reply
	}
	return w.list.Reply
}

// answer replies to a call or read with r.
func (a *Actor) answer(w work, r ToolResult) {
	to := w.replyTo()
	r.CorrelationID = to.Correlation
	reply.Send(a.engine, to, r)
}

// fail answers w with err. The actor's own re-list has no reply address:
// its failure goes nowhere.
func (a *Actor) fail(w work, err error) {
	if w.list != nil {
		to := w.list.Reply
		reply.Send(a.engine, to, CatalogListed{CorrelationID: to.Correlation, Error: reply.Fail(err)})
		return
	}
	a.answer(w, ToolResult{Error: reply.Fail(err)})
}

// what names w in errors.
func (w work) what() string {
	switch {
	case w.call != nil:
		return "the call to " + w.call.Tool
	case w.read != nil:
		return "the read of " + w.read.URI
	case w.prompt != nil:
		return "the prompt " + w.prompt.Name
	case w.complete != nil:
		return "the completion of " + w.complete.Argument
	}
	return "the catalog listing"
}
