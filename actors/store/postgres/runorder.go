package postgres

import (
	"strings"

	"github.com/mcpflow/mcpflow/actors/store"
)

// A step commit of a run that stays running leaves its row's updated_at
// and updated_at_ns as they were (runStep): it is a row of the run's
// journal (journal.go), or an update of the row in place. The columns
// are then the time the run last changed status, and the record's
// updated_at, as the journal folds it, its last update. ListRuns still
// orders every run by its last update: runsPage takes the runs that are
// not running in the order of runs_by_update and the running ones (few)
// by their records', and PostgreSQL merges the two.

// recordUpdate is the last update of a run's record (RFC 3339 text, in
// UTC, as encoding/json writes it) as the columns updated_at (to the
// microsecond, truncated) and updated_at_ns (the nanoseconds below it)
// keep it; recordTime and recordFraction are its text and its fraction
// of a second, to nine digits.
const (
	recordTime     = `((record::jsonb)->>'updated_at')`
	recordFraction = `rpad(coalesce(substring(` + recordTime + ` from '\.(\d+)'), ''), 9, '0')`
	recordUpdate   = `(substring(` + recordTime + ` from '^[^.Z]+') || '.' || substr(` + recordFraction + `, 1, 6) || 'Z')::timestamptz, ` +
		`substr(` + recordFraction + `, 7, 3)::int`
)

// runsPage is the query of ListRuns' page of the runs that pass where,
// newest update first (see above).
func runsPage(where []string) string {
	arm := func(cond string) string {
		return " FROM runs WHERE " + strings.Join(append([]string{cond}, where...), " AND ")
	}
	return "SELECT record FROM (" +
		"SELECT record, updated_at AS k, updated_at_ns AS kn, id" + arm("status <> '"+store.RunRunning+"'") +
		" UNION ALL " +
		"SELECT record, " + recordUpdate + ", id FROM (SELECT " + journalRecord + " AS record, id" + arm("status = '"+store.RunRunning+"'") + ") AS running" +
		") AS page ORDER BY k DESC, kn DESC, id DESC"
}
