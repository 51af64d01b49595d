package engines

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/mcpflow/mcpflow/actors/store"
)

// PebbleJournal is an append-only run journal in Pebble: what the SQLite
// store's run_journal holds (journal.go), a row per step commit of a
// running run, as one key per row. A row's key is its run's id, a zero
// byte and its sequence number (big-endian), so a run's rows are
// together and in order; its value is the step's run record, trace
// entries and run events, encoded as the SQLite store encodes them
// (store.Values.Pack, store.EncodeRunEvent), and the large values they
// refer to are keys of their own in the same batch. It holds the journal
// alone: a run's creation and end, its row and its folded trace, stay in
// SQLite.
type PebbleJournal struct {
	db    *pebble.DB
	write *pebble.WriteOptions
}

// OpenPebble opens (or creates) a journal in dir. With sync, an append
// returns once Pebble's write-ahead log is synced to disk (pebble.Sync),
// as the SQLite store's commits at sync full; without it, once the
// append is in Pebble's log buffer (pebble.NoSync), which a crash of the
// process may lose, where the SQLite store at sync normal has handed the
// commit to the operating system.
func OpenPebble(dir string, sync bool) (*PebbleJournal, error) {
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}})
	if err != nil {
		return nil, fmt.Errorf("open pebble journal %s: %w", dir, err)
	}
	write := pebble.NoSync
	if sync {
		write = pebble.Sync
	}
	return &PebbleJournal{db: db, write: write}, nil
}

// Close closes the journal.
func (j *PebbleJournal) Close() error {
	if err := j.db.Close(); err != nil {
		return fmt.Errorf("close pebble journal: %w", err)
	}
	return nil
}

// Append appends c, a step commit of a running run, as row seq of its
// run's journal, in one batch.
func (j *PebbleJournal) Append(c store.Commit, seq uint32) error {
	id := c.Run.ID
	values := store.Values{}
	row, err := journalRow(c, values)
	if err != nil {
		return fmt.Errorf("encode journal row %d of run %s: %w", seq, id, err)
	}
	b := j.db.NewBatch()
	defer b.Close()
	if err := b.Set(rowKey(id, seq), []byte(row), nil); err != nil {
		return fmt.Errorf("append journal row %d of run %s: %w", seq, id, err)
	}
	for key, value := range values {
		if err := b.Set([]byte("v/"+id+"/"+key), []byte(value), nil); err != nil {
			return fmt.Errorf("append journal row %d of run %s: %w", seq, id, err)
		}
	}
	if err := b.Commit(j.write); err != nil {
		return fmt.Errorf("append journal row %d of run %s: %w", seq, id, err)
	}
	return nil
}

// Rows returns the rows of run id's journal, in order.
func (j *PebbleJournal) Rows(id string) ([]string, error) {
	it, err := j.db.NewIter(&pebble.IterOptions{LowerBound: rowKey(id, 0), UpperBound: append([]byte("j/"+id), 1)})
	if err != nil {
		return nil, fmt.Errorf("read the journal of run %s: %w", id, err)
	}
	var rows []string
	for it.First(); it.Valid(); it.Next() {
		rows = append(rows, string(it.Value()))
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("read the journal of run %s: %w", id, err)
	}
	return rows, nil
}

// rowKey is the key of row seq of run id's journal.
func rowKey(id string, seq uint32) []byte {
	k := make([]byte, 0, 2+len(id)+1+4)
	k = append(k, "j/"...)
	k = append(k, id...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint32(k, seq)
}

// journalRow is c's journal row, as the SQLite store's run_journal row
// holds it: a JSON array of the index of its first trace entry, its run
// record, its trace entries and its events ([seq, event] pairs); values
// gets the large values they refer to.
func journalRow(c store.Commit, values store.Values) (string, error) {
	r := c.Run
	record, err := values.Pack(r.ID, r.Kept())
	if err != nil {
		return "", err
	}
	entries := make([]string, len(c.Entries))
	for i, e := range c.Entries {
		if entries[i], err = values.Pack(r.ID, e); err != nil {
			return "", err
		}
	}
	events := make([]string, len(c.Live))
	for i, e := range c.Live {
		text, err := store.EncodeRunEvent(e, values)
		if err != nil {
			return "", err
		}
		events[i] = fmt.Sprintf("[%d,%s]", e.Seq, text)
	}
	return fmt.Sprintf("[%d,%s,[%s],[%s]]", r.TraceCount-len(c.Entries), record,
		strings.Join(entries, ","), strings.Join(events, ",")), nil
}

// quietLogger drops Pebble's informational lines and keeps its errors
// (a benchmark's output is its figures).
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}

func (quietLogger) Errorf(format string, args ...any) { pebble.DefaultLogger.Errorf(format, args...) }

func (quietLogger) Fatalf(format string, args ...any) { pebble.DefaultLogger.Fatalf(format, args...) }
