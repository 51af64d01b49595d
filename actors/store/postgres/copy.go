package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpflow/mcpflow/actors/store"
)

// copyPage is how many runs, artifacts or events CopyFrom reads from its
// source at a time.
const copyPage = 500

// Counts is how many records of each kind a store holds.
type Counts struct {
	Workspaces      int `json:"workspaces"`
	Artifacts       int `json:"artifacts"`
	Deployments     int `json:"deployments"`
	Runs            int `json:"runs"`
	TraceEntries    int `json:"trace_entries"`
	RunEvents       int `json:"run_events"`
	Catalogs        int `json:"catalogs"`
	AuthRecords     int `json:"auth_records"`
	RegistryEntries int `json:"registry_entries"`
	Webhooks        int `json:"webhooks"`
	Schedules       int `json:"schedules"`
	Events          int `json:"events"`
}

// Total is the count of all records.
func (c Counts) Total() int {
	return c.Workspaces + c.Artifacts + c.Deployments + c.Runs + c.TraceEntries + c.RunEvents +
		c.Catalogs + c.AuthRecords + c.RegistryEntries + c.Webhooks + c.Schedules + c.Events
}

// CopyFrom copies every record of src into s, which must hold none, in one
// transaction, and returns how many of each kind it copied. Records keep
// their keys, and the event logs their sequence numbers, so that a
// client's cursor stays good; the admin event numbering goes on from src's
// last. Before it commits, it counts what s holds: a count that differs
// from what was read fails the copy, and s is left as it was.
//
// src must not change while it is read: stop the server that uses it.
func (s *Store) CopyFrom(ctx context.Context, src store.Store) (copied Counts, err error) {
	defer wrap(&err, "copy records into the store")
	err = s.update(ctx, func(tx pgx.Tx) error {
		held, err := countRecords(ctx, tx)
		if err != nil {
			return err
		}
		if held.Total() > 0 {
			return fmt.Errorf("it already holds %d records (%+v): copy into an empty database", held.Total(), held)
		}
		c := copier{ctx: ctx, tx: tx, src: src, retention: s.retention}
		for _, step := range []func(*Counts) error{
			c.workspaces, c.artifacts, c.deployments, c.runs, c.catalogs, c.authRecords, c.registry, c.webhooks, c.schedules, c.events,
		} {
			if err := step(&copied); err != nil {
				return err
			}
		}
		held, err = countRecords(ctx, tx)
		if err != nil {
			return err
		}
		if held != copied {
			return fmt.Errorf("%+v read, but %+v stored: nothing copied", copied, held)
		}
		return nil
	})
	return copied, err
}

// countRecords counts the records of each kind that q's database holds.
func countRecords(ctx context.Context, q querier) (Counts, error) {
	var c Counts
	err := q.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM workspaces), (SELECT count(*) FROM artifacts), (SELECT count(*) FROM deployments),
		(SELECT count(*) FROM runs), (SELECT count(*) FROM run_trace), (SELECT count(*) FROM run_events),
		(SELECT count(*) FROM catalogs), (SELECT count(*) FROM auth_records), (SELECT count(*) FROM source_registry),
		(SELECT count(*) FROM webhooks), (SELECT count(*) FROM schedules), (SELECT count(*) FROM events)`).Scan(&c.Workspaces,
		&c.Artifacts, &c.Deployments, &c.Runs, &c.TraceEntries, &c.RunEvents, &c.Catalogs, &c.AuthRecords, &c.RegistryEntries,
		&c.Webhooks, &c.Schedules, &c.Events)
	return c, err
}

// copier copies one kind of record at a time from src into tx, adding
// what it copied to the counts it is given.
type copier struct {
	ctx       context.Context
	tx        pgx.Tx
	src       store.Store
	retention time.Duration // the store's, which gives the runs copied their expiry
}

// workspaces copies the draft workspaces.
func (c copier) workspaces(n *Counts) error {
	list, err := c.src.ListWorkspaces(c.ctx)
	if err != nil {
		return err
	}
	for _, w := range list {
		if err := insertWorkspace(c.ctx, c.tx, w); err != nil {
			return fmt.Errorf("workspace %q: %w", w.ID, err)
		}
	}
	n.Workspaces += len(list)
	return nil
}

// artifacts copies every version of every artifact.
func (c copier) artifacts(n *Counts) error {
	for offset := 0; ; offset += copyPage {
		page, _, err := c.src.ListArtifacts(c.ctx, store.ArtifactQuery{Offset: offset, Limit: copyPage})
		if err != nil {
			return err
		}
		for _, a := range page {
			if _, err := saveArtifact(c.ctx, c.tx, a); err != nil {
				return fmt.Errorf("artifact %q version %d: %w", a.ID, a.Version, err)
			}
		}
		n.Artifacts += len(page)
		if len(page) < copyPage {
			return nil
		}
	}
}

// deployments copies the deployments.
func (c copier) deployments(n *Counts) error {
	list, err := c.src.ListDeployments(c.ctx)
	if err != nil {
		return err
	}
	for _, d := range list {
		if err := upsert(c.ctx, c.tx, upsertDeployment, d.ID, d); err != nil {
			return fmt.Errorf("deployment %q: %w", d.ID, err)
		}
	}
	n.Deployments += len(list)
	return nil
}

// runs copies each run with its whole trace and event log.
func (c copier) runs(n *Counts) error {
	for offset := 0; ; offset += copyPage {
		page, _, err := c.src.ListRuns(c.ctx, store.RunQuery{Offset: offset, Limit: copyPage})
		if err != nil {
			return err
		}
		for _, r := range page {
			trace, events, err := c.run(r)
			if err != nil {
				return fmt.Errorf("run %q: %w", r.ID, err)
			}
			n.TraceEntries += trace
			n.RunEvents += events
		}
		n.Runs += len(page)
		if len(page) < copyPage {
			return nil
		}
	}
}

// run copies one run and returns how many trace entries and events it
// has.
func (c copier) run(r store.Run) (int, int, error) {
	trace, err := c.src.ReadTrace(c.ctx, r.ID, 0, 0)
	if err != nil {
		return 0, 0, err
	}
	if len(trace) != r.TraceCount {
		return 0, 0, fmt.Errorf("its trace has %d entries, but its trace_count is %d", len(trace), r.TraceCount)
	}
	events, last, err := c.src.ReadRunEvents(c.ctx, r.ID, 0, 0)
	if err != nil {
		return 0, 0, err
	}
	row, err := newRunRow(r, c.retention)
	if err != nil {
		return 0, 0, err
	}
	seqs, records, err := eventArgs(events, row.values)
	if err != nil {
		return 0, 0, err
	}
	// Node "": the runs of a store used by one node alone, which a
	// cluster's nodes claim at start (store.RunClaimer).
	if _, err := c.tx.Exec(c.ctx, insertRun, append(row.args(last, ""), seqs, records)...); err != nil {
		return 0, 0, err
	}
	b := &pgx.Batch{}
	if err := queueTrace(b, r.ID, 0, trace, row.values); err != nil {
		return 0, 0, err
	}
	if err := queueValues(c.ctx, c.tx, b, r.ID, row.values); err != nil {
		return 0, 0, err
	}
	if err := c.tx.SendBatch(c.ctx, b).Close(); err != nil {
		return 0, 0, err
	}
	return len(trace), len(events), nil
}

// catalogs copies the catalog snapshots.
func (c copier) catalogs(n *Counts) error {
	list, err := c.src.ListCatalogs(c.ctx)
	if err != nil {
		return err
	}
	for _, snap := range list {
		if err := upsert(c.ctx, c.tx, upsertCatalog, snap.ConnectionID, snap); err != nil {
			return fmt.Errorf("catalog %q: %w", snap.ConnectionID, err)
		}
	}
	n.Catalogs += len(list)
	return nil
}

// authRecords copies the auth records, secret payloads included.
func (c copier) authRecords(n *Counts) error {
	list, err := c.src.ListAuth(c.ctx)
	if err != nil {
		return err
	}
	for _, a := range list {
		if !store.ValidAuthID(a.ID) {
			return fmt.Errorf("auth record %q: the id is not a valid auth id: %w", a.ID, store.ErrInvalid)
		}
		if err := upsert(c.ctx, c.tx, upsertAuth, a.ID, a); err != nil {
			return fmt.Errorf("auth record %q: %w", a.ID, err)
		}
	}
	n.AuthRecords += len(list)
	return nil
}

// webhooks copies the webhooks, their secrets as src keeps them (sealed
// by a store that seals). The delivery ids they took are not copied: the
// dedup window starts again.
func (c copier) webhooks(n *Counts) error {
	list, err := c.src.ListWebhooks(c.ctx)
	if err != nil {
		return err
	}
	for _, h := range list {
		if err := upsert(c.ctx, c.tx, insertWebhook, h.ID, h); err != nil {
			return fmt.Errorf("webhook %q: %w", h.ID, err)
		}
	}
	n.Webhooks += len(list)
	return nil
}

// schedules copies the schedules with their state: counts and last
// tick, so that the copy catches up from where the source stopped.
func (c copier) schedules(n *Counts) error {
	list, err := c.src.ListSchedules(c.ctx)
	if err != nil {
		return err
	}
	for _, sc := range list {
		if err := insertSchedule(c.ctx, c.tx, sc); err != nil {
			return fmt.Errorf("schedule %q: %w", sc.ID, err)
		}
	}
	n.Schedules += len(list)
	return nil
}

// registry copies the source registry.
func (c copier) registry(n *Counts) error {
	list, err := c.src.ListRegistryEntries(c.ctx)
	if err != nil {
		return err
	}
	for _, e := range list {
		if err := upsert(c.ctx, c.tx, upsertRegistryEntry, e.ID, e); err != nil {
			return fmt.Errorf("registry entry %q: %w", e.ID, err)
		}
	}
	n.RegistryEntries += len(list)
	return nil
}

// events copies the kept admin events under their numbers and sets the
// counter to src's last number, which retention may have left above the
// last event kept.
func (c copier) events(n *Counts) error {
	last, err := c.src.LastEventSeq(c.ctx)
	if err != nil {
		return err
	}
	var after int64
	for {
		page, err := c.src.ListEvents(c.ctx, after, copyPage)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			break
		}
		seqs := make([]int64, len(page))
		records := make([]string, len(page))
		for i, e := range page {
			seqs[i] = e.Seq
			e.Seq = 0 // the seq column holds it
			if records[i], err = encode(e); err != nil {
				return err
			}
		}
		if _, err := c.tx.Exec(c.ctx, `INSERT INTO events (seq, record) SELECT * FROM unnest($1::bigint[], $2::text[])`, seqs, records); err != nil {
			return err
		}
		n.Events += len(page)
		after = seqs[len(seqs)-1]
	}
	if last < after {
		return fmt.Errorf("the source's last event number, %d, is below that of an event it keeps, %d", last, after)
	}
	_, err = c.tx.Exec(c.ctx, `UPDATE event_counter SET last_seq = $1`, last)
	return err
}
