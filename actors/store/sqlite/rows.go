package sqlite

import (
	"context"
	"strings"
)

// maxRowsPerInsert bounds the rows one statement of a rowsInsert takes; a
// commit appends more in several.
const maxRowsPerInsert = 8

// rowsInsert is an INSERT of one to maxRowsPerInsert rows: a commit
// appends its trace entries, and its run events, in one statement each
// rather than one per row. Each row count has its statement, prepared
// once like every write query.
type rowsInsert struct {
	width   int          // columns per row
	queries []writeQuery // queries[n-1] inserts n rows
}

// newRowsInsert declares the INSERT `into` (the table and its columns) of
// rows of width values.
func newRowsInsert(into string, width int) rowsInsert {
	row := "(" + strings.Repeat("?, ", width-1) + "?)"
	ins := rowsInsert{width: width}
	for n := 1; n <= maxRowsPerInsert; n++ {
		ins.queries = append(ins.queries, newWriteQuery("INSERT INTO "+into+" VALUES "+strings.Repeat(row+", ", n-1)+row))
	}
	return ins
}

// exec inserts in tx the rows whose values args holds, row after row.
func (ins rowsInsert) exec(ctx context.Context, tx writeTx, args []any) error {
	for len(args) > 0 {
		n := min(len(args)/ins.width, maxRowsPerInsert)
		if _, err := tx.exec(ctx, ins.queries[n-1], args[:n*ins.width]...); err != nil {
			return err
		}
		args = args[n*ins.width:]
	}
	return nil
}
