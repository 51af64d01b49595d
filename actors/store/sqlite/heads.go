package sqlite

import "github.com/mcpflow/mcpflow/actors/store"

// maxCachedHeads bounds the heads the writer keeps: past it, it forgets
// them all and reads each again at its run's next commit.
const maxCachedHeads = 4096

// runHeads is the writer's cache of the heads of the runs it has written
// that have not ended, as its transaction leaves them (store.RunHead and
// the sequence number of the run's last event): a commit reads its run's
// head here rather than from the run's row. Only the writer's goroutine
// touches it, inside its writes. It holds what a write changed before the
// write's batch commits, so the writer drops it whole whenever a write or
// a batch is rolled back; a write that finds no head reads the row. One
// process writes the file (its lock), so nothing else changes a head.
type runHeads struct {
	heads map[string]cachedHead
}

// cachedHead is one run's head and its last event's sequence number.
type cachedHead struct {
	head    store.RunHead
	lastSeq int64
	journal int64 // the seq of the run's last journal row, 0 for none
}

// get returns the head of run id, if cached.
func (c *runHeads) get(id string) (cachedHead, bool) {
	h, ok := c.heads[id]
	return h, ok
}

// put caches head, after whose commit the run's last event is lastSeq
// and its last journal row journal; a run that has ended is forgotten
// (no commit follows its end but a resume, which reads its row).
func (c *runHeads) put(head store.RunHead, lastSeq, journal int64) {
	if store.Terminal(head.Status) {
		delete(c.heads, head.ID)
		return
	}
	if c.heads == nil || len(c.heads) >= maxCachedHeads {
		c.heads = make(map[string]cachedHead)
	}
	c.heads[head.ID] = cachedHead{head: head, lastSeq: lastSeq, journal: journal}
}

// forget drops the head of run id.
func (c *runHeads) forget(id string) { delete(c.heads, id) }

// drop forgets every head: a write or a batch was rolled back, and what
// the cache holds may be what it undid.
func (c *runHeads) drop() { clear(c.heads) }
