package session

import (
	"log/slog"

	"github.com/mcpflow/mcpflow/actors/reply"
)

// The catalog: the session lists the server's tools, resources and prompts
// when it opens (if the last listing is stale), when the listing turns
// stale, and shortly after the server announces a change; the parent
// stores each listing it did not ask for.

// onListDone delivers a finished listing to whoever asked for it, or to
// the parent, and starts the re-list a change announced meanwhile.
func (a *Actor) onListDone(m listDone) {
	f, ok := a.running[m.run]
	if !ok {
		return
	}
	delete(a.running, m.run)
	a.refresh.running = false
	failure := classify(m.rpcErr, f.transport)
	if m.result.Error == nil {
		a.listedAt, a.lastSuccess, a.missed = a.clock.Now(), a.clock.Now(), 0
		if a.opts.CatalogMaxAge > 0 {
			a.after(&a.staleTimer, a.opts.CatalogMaxAge, catalogStale{attempt: a.attempt})
		}
	}
	if to := f.w.list.Reply; !to.IsZero() {
		listed := m.result
		listed.CorrelationID = to.Correlation
		reply.Send(a.engine, to, listed)
	} else if m.result.Error == nil {
		a.notifyParent(m.result)
	}
	if (failure == failUnsent || failure == failLost) && f.attempt == a.attempt && a.session != nil {
		a.dropSession(m.rpcErr, false)
		return
	}
	if a.refresh.due {
		a.refresh.due = false
		a.admit(work{list: &ListCatalog{Deadline: a.clock.Now().Add(a.opts.CallTimeout)}})
	}
	a.drain()
}

// onListChanged handles a tools, resources or prompts list_changed
// notification of attempt's session: the catalog is listed again once
// ListChangedDebounce has passed since the first of a burst, so that a
// server announcing many changes at once is listed once.
func (a *Actor) onListChanged(m listChanged) {
	if m.attempt != a.attempt || a.session == nil {
		return
	}
	slog.Debug("mcp list changed", "connection", a.conn.ID, "list", m.list)
	if a.refresh.debouncing {
		return
	}
	a.refresh.debouncing = true
	a.after(&a.debounceTimer, a.opts.ListChangedDebounce, relistDue{attempt: m.attempt})
}

// onRelistDue ends a debounce window by listing the catalog.
func (a *Actor) onRelistDue(m relistDue) {
	a.refresh.debouncing = false
	if m.attempt == a.attempt {
		a.relist()
	}
}

// relist lists the catalog now, or right after the listing in flight.
func (a *Actor) relist() {
	if a.state != StateOpen {
		return
	}
	if a.refresh.running {
		a.refresh.due = true
		return
	}
	a.admit(work{list: &ListCatalog{Deadline: a.clock.Now().Add(a.opts.CallTimeout)}})
}

// notifyParent hands the parent a listing nobody asked for.
func (a *Actor) notifyParent(m CatalogListed) {
	if a.parent != nil {
		a.engine.Send(a.parent, m)
	}
}
