package sqlite

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcpflow/mcpflow/actors/store"
)

// A step commit of a run that stays running leaves its row as it was
// (runStep, journal.go): its updated_at is then the time the run last
// changed status, and its journal's last record has its last update.
// ListRuns still orders every run by its last update: runsPage takes the
// runs that are not running in the order of runs_by_update, the running
// ones (few, found through runs_by_status) by their records' as the
// journal folds them, and SQLite merges the two.

// timeKeySQL is the SQL name of timeKeyOf.
const timeKeySQL = "mcpflow_time_key"

// timeKeyOf is the timeKey of a record's time (RFC 3339 text, as
// encoding/json writes a time.Time); NULL stays NULL.
func timeKeyOf(arg any) (any, error) {
	switch v := arg.(type) {
	case nil:
		return nil, nil
	case string:
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", timeKeySQL, err)
		}
		return timeKey(t), nil
	default:
		return nil, fmt.Errorf("%s: want text, got %T", timeKeySQL, v)
	}
}

// runsPage is the query of ListRuns' page of the runs that pass where,
// newest update first (see above): a compound select, whose ORDER BY
// SQLite runs as a merge of its two parts, each in order, rather than a
// sort of every run. Its first column is the record.
func runsPage(where []string) string {
	arm := func(cond string) string {
		return " FROM runs WHERE " + strings.Join(append([]string{cond}, where...), " AND ")
	}
	return "SELECT record, updated_at AS k, id" + arm("status <> '"+store.RunRunning+"'") +
		" UNION ALL " +
		"SELECT " + journalRun + ", " + timeKeySQL + "(json_extract(" + journalRun + ", '$.updated_at')), id" + arm("status = '"+store.RunRunning+"'") +
		" ORDER BY k DESC, id DESC"
}
