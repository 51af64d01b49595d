package lease_test

import (
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
)

func TestGenerationsGoOnAcrossTenuresAndAStaleOwnerClaimsNone(t *testing.T) {
	is := is.New(t)
	table, _ := openTable(t, pgtest.Start(t), "")
	ctx := t.Context()

	a, err := table.Acquire(ctx, "conn/x", "node-a", time.Minute)
	is.NoErr(err)
	for want := int64(1); want <= 2; want++ {
		gen, err := table.NextGeneration(ctx, a)
		is.NoErr(err)
		is.Equal(gen, want) // node-a's sessions, counted from 1
	}
	is.NoErr(table.Release(ctx, a))
	b, err := table.Acquire(ctx, "conn/x", "node-b", time.Minute)
	is.NoErr(err)
	gen, err := table.NextGeneration(ctx, b)
	is.NoErr(err)
	is.Equal(gen, int64(3)) // the next owner goes on from the last generation

	_, err = table.NextGeneration(ctx, a)
	is.True(errors.Is(err, lease.ErrLost)) // the stale owner can open no session
	st, err := table.Get(ctx, "conn/x")
	is.NoErr(err)
	is.Equal(st.Owner, "node-b")
}
