// Package paging owns the offset cursors of the list methods: reading a
// cursor and a limit, cutting one page of rows, and the cursor of what
// follows it. A bad cursor or limit is an *Error, which the API maps.
package paging

import (
	"fmt"
	"strconv"
)

// Error is a cursor or a limit that is not acceptable; Message is
// written for the client.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

// Read reads an offset cursor and a limit (default def).
func Read(cursor *string, limit *int, def int) (offset, n int, err error) {
	n = def
	if limit != nil {
		if *limit < 1 {
			return 0, 0, &Error{Message: "limit must be at least 1"}
		}
		n = *limit
	}
	if cursor != nil && *cursor != "" {
		offset, err = strconv.Atoi(*cursor)
		if err != nil || offset < 0 {
			return 0, 0, &Error{Message: fmt.Sprintf("cursor %q is not a non-negative integer offset", *cursor)}
		}
	}
	return offset, n, nil
}

// Cut cuts rows[offset:offset+limit] and the cursor of what follows.
func Cut[T any](rows []T, offset, limit int) ([]T, *string) {
	if offset >= len(rows) {
		return []T{}, nil
	}
	end := min(offset+limit, len(rows))
	return rows[offset:end], Next(end, len(rows))
}

// Next is the cursor after end, or nil at the last page.
func Next(end, total int) *string {
	if end >= total {
		return nil
	}
	c := strconv.Itoa(end)
	return &c
}
