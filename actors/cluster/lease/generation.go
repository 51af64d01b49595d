package lease

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// nextGenerationSQL counts one more generation on the key of a live
// tenure ($1 key, $2 owner, $3 epoch).
const nextGenerationSQL = `
UPDATE leases SET generation = generation + 1
WHERE key = $1 AND owner = $2 AND epoch = $3 AND expires_at > clock_timestamp()
RETURNING generation`

// NextGeneration counts one more generation of whatever l guards (a
// connection's upstream sessions) and returns it, if l is still live and
// of the same owner and epoch; otherwise the error is ErrLost. The count
// belongs to the key, not to a tenure: it goes on across owners, so a
// key's generations grow however often it changes hands, and a stale
// owner can claim none.
func (t *Table) NextGeneration(ctx context.Context, l Lease) (int64, error) {
	var gen int64
	err := t.pool.QueryRow(ctx, nextGenerationSQL, l.Key, l.Owner, l.Epoch).Scan(&gen)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, fmt.Errorf("next generation of %q at epoch %d of %q: %w", l.Key, l.Epoch, l.Owner, ErrLost)
	case err != nil:
		return 0, fmt.Errorf("next generation of %q: %w", l.Key, err)
	}
	return gen, nil
}
