package records

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
)

// TestDeleteRefusesAnUnknownVersionAndDeletesAnUnusedOne: an unknown
// version is not found and writes nothing; an unused one is deleted,
// after which it is unknown.
func TestDeleteRefusesAnUnknownVersionAndDeletesAnUnusedOne(t *testing.T) {
	is := is.New(t)
	ctx := bounded(t)
	st := store.NewMemory()
	_, written, err := Delete(ctx, st, "a", 1)
	is.True(errors.Is(err, store.ErrNotFound))
	is.True(!written)
	is.NoErr(Save(ctx, st, artifactA))
	blockers, written, err := Delete(ctx, st, "a", 1)
	is.NoErr(err)
	is.True(written)
	is.Equal(len(blockers), 0)
	_, err = st.GetArtifact(ctx, "a", 1)
	is.True(errors.Is(err, store.ErrNotFound))
}
