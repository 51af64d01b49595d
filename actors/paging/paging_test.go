package paging_test

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/paging"
)

func TestReadTakesTheDefaultLimitAndAnOffsetCursor(t *testing.T) {
	is := is.New(t)
	cursor, limit := "3", 2
	offset, n, err := paging.Read(&cursor, &limit, 50)
	is.NoErr(err)
	is.Equal(offset, 3)
	is.Equal(n, 2)
	offset, n, err = paging.Read(nil, nil, 50)
	is.NoErr(err)
	is.Equal(offset, 0)
	is.Equal(n, 50)
}

func TestReadRefusesABadCursorOrLimit(t *testing.T) {
	is := is.New(t)
	zero, bad := 0, "-1"
	var failed *paging.Error
	_, _, err := paging.Read(nil, &zero, 50)
	is.True(errors.As(err, &failed))
	is.Equal(failed.Message, "limit must be at least 1")
	_, _, err = paging.Read(&bad, nil, 50)
	is.True(errors.As(err, &failed))
	is.Equal(failed.Message, `cursor "-1" is not a non-negative integer offset`)
}

func TestCutAnswersThePageAndTheCursorOfWhatFollows(t *testing.T) {
	is := is.New(t)
	rows := []int{1, 2, 3, 4, 5}
	page, next := paging.Cut(rows, 1, 2)
	is.Equal(page, []int{2, 3})
	is.Equal(*next, "3")
	page, next = paging.Cut(rows, 3, 2)
	is.Equal(page, []int{4, 5})
	is.True(next == nil)
	page, next = paging.Cut(rows, 9, 2)
	is.Equal(page, []int{})
	is.True(next == nil)
}
