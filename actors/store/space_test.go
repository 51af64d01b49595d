package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

// change is one change a Space told.
type change struct {
	full  bool
	since time.Time
}

func TestASpaceIsFullFromAWriteRefusedForSpaceUntilAWriteSucceeds(t *testing.T) {
	is := is.New(t)
	var told []change
	sp := store.NewSpace(func(full bool, since time.Time) { told = append(told, change{full, since}) })
	full := fmt.Errorf("write: %w", store.ErrFull)

	is.NoErr(sp.Observe(nil))                                        // a write that succeeds
	is.Equal(sp.Observe(errors.New("conflict")).Error(), "conflict") // another error is passed on
	is.Equal(len(told), 0)                                           // and changes nothing

	is.Equal(sp.Observe(full), full) // the error is passed on
	is.Equal(sp.Observe(full), full)
	now, since := sp.Full()
	is.True(now)           // full from the first refused write
	is.Equal(len(told), 1) // told once
	is.True(told[0].full)
	is.Equal(told[0].since, since)

	is.NoErr(sp.Observe(nil))
	now, _ = sp.Full()
	is.True(!now) // writable again at the next write that succeeds
	is.Equal(len(told), 2)
	is.True(!told[1].full)
	is.Equal(told[1].since, since) // telling since when it was full
}

func TestANilSpaceTracksNothing(t *testing.T) {
	is := is.New(t)
	var sp *store.Space
	full := fmt.Errorf("write: %w", store.ErrFull)
	is.Equal(sp.Observe(full), full)
	sp.MarkFull()
	now, _ := sp.Full()
	is.True(!now)
}

func TestASpaceMarkedFullAtOpenStaysFullUntilAWriteSucceeds(t *testing.T) {
	is := is.New(t)
	sp := store.NewSpace(nil)
	sp.MarkFull()
	now, _ := sp.Full()
	is.True(now)
	is.NoErr(sp.Observe(nil))
	now, _ = sp.Full()
	is.True(!now)
}
