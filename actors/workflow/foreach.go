package workflow

import (
	"fmt"
	"strconv"
)

// startLoop begins a foreach: it reads the items and admits the first
// ones as item frames, and the loop's frame blocks until they are done.
// An item runs from the node the "loop" outcome routes to until its body
// routes to the end or back to the foreach node.
func (e *Execution) startLoop(f *Frame, node *Node) error {
	raw, ok := e.reader(f)(*node.Over)
	if !ok {
		return fmt.Errorf("step %q: foreach source %s has no value", node.ID, node.Over)
	}
	items, ok := raw.([]any)
	if !ok {
		return fmt.Errorf("step %q: foreach source %s is %s, not an array", node.ID, node.Over, jsonType(raw))
	}
	if _, ok := e.plan(f).routes[node.ID][OutcomeLoop]; !ok {
		return fmt.Errorf("step %q: foreach has no %q route", node.ID, OutcomeLoop)
	}
	f.Loop = &Loop{Node: node.ID, Items: items}
	f.Status = FrameBlocked
	if len(items) == 0 {
		return e.loopDone(f, node)
	}
	e.admit(f, node)
	return nil
}

// admit starts as many items as the loop's mode allows: one at a time
// when serial; up to max_active running at once when concurrent. Finished
// items wait for the barrier without holding a slot: counting them would
// stall any loop longer than max_outstanding, as nothing commits before
// every item is through.
func (e *Execution) admit(f *Frame, node *Node) {
	loop := f.Loop
	limit := 1
	if node.Mode == ModeConcurrent {
		active, outstanding := node.Concurrent.limits()
		limit = min(active, outstanding)
	}
	body := e.plan(f).routes[node.ID][OutcomeLoop]
	for loop.Active < limit && loop.Next < len(loop.Items) {
		i := loop.Next
		loop.Next++
		loop.Active++
		id := f.ID + ":" + node.ID + ":" + strconv.Itoa(i)
		item := &Frame{
			ID: id, Scope: f.Scope, Node: body, Parent: f.ID, Lineage: id,
			Item: &ItemContext{Loop: node.ID, Index: i, Value: deepCopy(loop.Items[i]), As: node.As, Buffered: node.Mode == ModeConcurrent},
		}
		e.snap.Frames[id] = item
		e.enqueue(item)
		input := Object{"item": item.Item.Value, "index": float64(i)}
		if item.Item.Buffered {
			input["active_count"] = float64(loop.Active)
		}
		e.record(f, node, input, OutcomeLoop, Object{}, Object{})
	}
}

// itemDone records a finished item and admits the next ones; the last one
// through completes the loop.
func (e *Execution) itemDone(item *Frame) error {
	parent := e.snap.Frames[item.Parent]
	loop := parent.Loop
	loop.Active--
	if item.Item.Buffered {
		if loop.Finished == nil {
			loop.Finished = map[int]*Frame{}
		}
		loop.Finished[item.Item.Index] = item
	}
	delete(e.snap.Frames, item.ID)
	node := e.node(parent)
	if loop.Next < len(loop.Items) {
		e.admit(parent, node)
		return nil
	}
	if loop.Active > 0 {
		return nil
	}
	return e.loopDone(parent, node)
}

// itemFailed handles a step failure in frame f. Outside a foreach item it
// fails the run. Inside one (also inside a child workflow that an item's
// subgraph step runs), the loop's item_error policy decides: "fail" fails
// the run; "skip" drops the item's buffered writes; "collect" drops them
// too and keeps {index, item, error} for collect_to.
func (e *Execution) itemFailed(f *Frame, cause error) {
	item := f
	for item != nil && item.Item == nil {
		item = e.up(item)
	}
	if item == nil {
		e.fail(cause)
		return
	}
	parent := e.snap.Frames[item.Parent]
	node := e.node(parent)
	action := node.ItemError.action()
	if action == ItemFail {
		e.fail(fmt.Errorf("foreach %q item %d: %w", node.ID, item.Item.Index, cause))
		return
	}
	e.dropFrames(item)
	parent.Loop.Errors = append(parent.Loop.Errors, Object{
		"index": float64(item.Item.Index), "frame_id": item.ID, "node_id": f.Node,
		"message": cause.Error(), "item": item.Item.Value,
	})
	item.Overlay, item.Status = nil, FrameDone
	item.Item.Buffered = false // nothing of it commits
	if err := e.itemDone(item); err != nil {
		e.fail(err)
	}
}

// up is the frame f runs under: its foreach parent, or for the main
// frame of a child workflow the subgraph step's frame that called it; nil
// for the root frame.
func (e *Execution) up(f *Frame) *Frame {
	if f.Parent != "" {
		return e.snap.Frames[f.Parent]
	}
	if s := e.snap.Scopes[f.Scope]; s != nil && s.Caller != "" {
		return e.snap.Frames[s.Caller]
	}
	return nil
}

// dropFrames removes what runs inside item (its own loops' items and the
// child workflows its subgraph steps started), and withdraws their calls.
func (e *Execution) dropFrames(item *Frame) {
	var drop []string
	for _, id := range SortedKeys(e.snap.Frames) {
		for a := e.up(e.snap.Frames[id]); a != nil; a = e.up(a) {
			if a.ID == item.ID {
				drop = append(drop, id)
				break
			}
		}
	}
	for _, id := range drop {
		delete(e.snap.Frames, id)
	}
	for id, s := range e.snap.Scopes {
		if _, live := e.snap.Frames[s.Caller]; s.Caller != "" && (!live || s.Caller == item.ID) {
			delete(e.snap.Scopes, id)
		}
	}
	for id, c := range e.snap.Calls {
		if _, live := e.snap.Frames[c.FrameID]; !live || c.FrameID == item.ID {
			delete(e.snap.Calls, id)
		}
	}
}

// loopDone is the barrier: a concurrent loop's buffered writes commit in
// item order, through their reducers; two items may write one path only
// when its reducer is mergeable, and never overlapping paths. With
// item_error "collect", the failed items' records commit to collect_to as
// one list. The loop's frame then follows "done", or
// "completed_with_errors" when items failed.
func (e *Execution) loopDone(f *Frame, node *Node) error {
	loop := f.Loop
	if err := e.checkSiblingWrites(f, node); err != nil {
		return err
	}
	// The barrier commits all or nothing.
	var tops []string
	for _, item := range loop.Finished {
		for _, w := range item.Overlay {
			tops = append(tops, w.Path[0])
		}
	}
	collect := node.ItemError
	if collect.action() == ItemCollect && collect.CollectTo != nil {
		tops = append(tops, collect.CollectTo.Parts[0])
	}
	undo := e.savepoint(f, tops)
	changes := Object{}
	for i := range len(loop.Items) {
		item, ok := loop.Finished[i]
		if !ok {
			continue
		}
		for _, w := range item.Overlay {
			if err := e.write(f, StatePath{fieldOf(Path{Root: RootState, Parts: w.Path}, statePath)}, w.Value, changes); err != nil {
				undo()
				return fmt.Errorf("foreach %q item %d: %w", node.ID, i, err)
			}
		}
	}
	if collect.action() == ItemCollect && collect.CollectTo != nil {
		records := make([]any, len(loop.Errors))
		for i, r := range loop.Errors {
			records[i] = r
		}
		if err := e.write(f, *collect.CollectTo, records, changes); err != nil {
			undo()
			return fmt.Errorf("foreach %q: collect_to: %w", node.ID, err)
		}
	}
	outcome := OutcomeDone
	if len(loop.Errors) > 0 {
		outcome = OutcomeCompletedWithErrors
	}
	// Serial items commit as they go, concurrent ones above: either way
	// every item that did not fail is committed.
	committed := len(loop.Items) - len(loop.Errors)
	input := Object{"count": float64(len(loop.Items)), "committed_items": float64(committed), "failed_items": float64(len(loop.Errors))}
	f.Loop = nil
	e.record(f, node, input, outcome, Object{}, changes)
	e.enqueue(f)
	return e.follow(f, node, outcome)
}

// checkSiblingWrites refuses a barrier where two items wrote one path
// whose reducer is not mergeable, or paths inside one another.
func (e *Execution) checkSiblingWrites(f *Frame, node *Node) error {
	schema := e.plan(f).plan.StateSchema
	writers := map[string]int{}
	paths := map[string][]string{}
	for i := range len(f.Loop.Items) {
		item, ok := f.Loop.Finished[i]
		if !ok {
			continue
		}
		for _, w := range item.Overlay {
			key := Path{Root: RootState, Parts: w.Path}.String()
			if first, seen := writers[key]; seen && first != i {
				r, err := reducerAt(schema, w.Path)
				if err != nil {
					return err
				}
				if !r.reducer.Mergeable {
					return fmt.Errorf("foreach %q: items %d and %d both write %s, which needs a mergeable reducer (it has %s)", node.ID, first, i, key, r.reducer.Name)
				}
				continue
			}
			for other, otherParts := range paths {
				if other != key && writers[other] != i && (isPrefix(otherParts, w.Path) || isPrefix(w.Path, otherParts)) {
					return fmt.Errorf("foreach %q: items %d and %d write overlapping paths %s and %s", node.ID, writers[other], i, other, key)
				}
			}
			writers[key], paths[key] = i, w.Path
		}
	}
	return nil
}

// isPrefix reports whether a is a proper prefix of b.
func isPrefix(a, b []string) bool {
	if len(a) >= len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
