package lease_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
)

// auditSQL records every version of every lease row, in the order the row
// took them (the trigger runs while the statement holds the row's lock).
const auditSQL = `
CREATE TABLE lease_audit (
	seq        bigserial PRIMARY KEY,
	key        text NOT NULL,
	owner      text NOT NULL,
	epoch      bigint NOT NULL,
	renewed_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL
);
CREATE FUNCTION audit_lease() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO lease_audit (key, owner, epoch, renewed_at, expires_at)
	VALUES (NEW.key, NEW.owner, NEW.epoch, NEW.renewed_at, NEW.expires_at);
	RETURN NEW;
END $$;
CREATE TRIGGER leases_audit AFTER INSERT OR UPDATE ON leases FOR EACH ROW EXECUTE FUNCTION audit_lease();`

// version is a row of lease_audit.
type version struct {
	Seq       int64
	Key       string
	Owner     string
	Epoch     int64
	RenewedAt time.Time
	ExpiresAt time.Time
}

// TestNoTwoOwnersAtOnce races owners over a few keys with random
// acquisitions, renewals, releases and checks, with ttls from a
// microsecond to 20 ms so that leases expire all the time, and then reads
// every version each lease row went through: on each key the tenures
// follow one another in the database's time, never overlapping, each with
// one owner and the next epoch.
func TestNoTwoOwnersAtOnce(t *testing.T) {
	const (
		owners = 6
		keys   = 3
		ops    = 300 // per owner
	)
	is := is.New(t)
	srv := pgtest.Start(t)
	table, pool := openTable(t, srv, fmt.Sprintf(" pool_max_conns=%d", owners))
	_, err := pool.Exec(t.Context(), auditSQL)
	is.NoErr(err)

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	seen := make([][]lease.Lease, owners) // every lease an owner was granted or renewed
	var wg sync.WaitGroup
	for o := range owners {
		wg.Go(func() {
			seen[o] = churn(t, table, rand.New(rand.NewPCG(seed, uint64(o))), fmt.Sprintf("node-%d", o), keys, ops)
		})
	}
	wg.Wait()

	versions := auditLog(t, pool)
	tenures, handovers := checkTenures(t, versions)
	t.Logf("%d row versions, %d tenures, %d of them taken from another owner", len(versions), tenures, handovers)
	is.True(handovers >= keys) // the keys did change hands

	recorded := make(map[version]bool, len(versions))
	for _, v := range versions {
		recorded[version{Key: v.Key, Owner: v.Owner, Epoch: v.Epoch, RenewedAt: v.RenewedAt, ExpiresAt: v.ExpiresAt}] = true
	}
	for _, leases := range seen {
		for _, l := range leases {
			v := version{Key: l.Key, Owner: l.Owner, Epoch: l.Epoch, RenewedAt: l.RenewedAt, ExpiresAt: l.ExpiresAt}
			is.True(recorded[v]) // every grant an owner saw is a version of the row
		}
	}
}

// churn runs ops random operations of owner on keys "k0".."k<keys-1>",
// and returns every lease it was granted or renewed.
func churn(t *testing.T, table *lease.Table, rnd *rand.Rand, owner string, keys, ops int) []lease.Lease {
	is := is.NewRelaxed(t) // from a goroutine: failures are reported, not fatal
	ctx := t.Context()
	ttls := []time.Duration{time.Microsecond, 100 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond}
	held := map[string]lease.Lease{}
	var seen []lease.Lease
	pickHeld := func() (lease.Lease, bool) {
		for _, l := range held { // map order is random enough
			return l, true
		}
		return lease.Lease{}, false
	}
	for range ops {
		switch op := rnd.IntN(10); {
		case op < 5:
			key := fmt.Sprintf("k%d", rnd.IntN(keys))
			l, err := table.Acquire(ctx, key, owner, ttls[rnd.IntN(len(ttls))])
			if err != nil {
				is.True(errors.Is(err, lease.ErrHeld)) // the only refusal
				delete(held, key)
				continue
			}
			held[key] = l
			seen = append(seen, l)
		case op < 8:
			l, ok := pickHeld()
			if !ok {
				continue
			}
			renewed, err := table.Renew(ctx, l)
			if err != nil {
				is.True(errors.Is(err, lease.ErrLost))
				delete(held, l.Key)
				continue
			}
			is.Equal(renewed.Epoch, l.Epoch)
			held[l.Key] = renewed
			seen = append(seen, renewed)
		case op < 9:
			l, ok := pickHeld()
			if !ok {
				continue
			}
			delete(held, l.Key)
			if err := table.Release(ctx, l); err != nil {
				is.True(errors.Is(err, lease.ErrLost))
			}
		default:
			l, ok := pickHeld()
			if !ok {
				continue
			}
			if err := table.Check(ctx, l.Key, l.Epoch); err != nil {
				is.True(errors.Is(err, lease.ErrStale)) // superseded, never unknown
				delete(held, l.Key)
			}
		}
	}
	return seen
}

// auditLog reads every recorded version, key by key, in the order each
// row took them.
func auditLog(t *testing.T, pool *pgxpool.Pool) []version {
	t.Helper()
	rows, err := pool.Query(t.Context(),
		`SELECT seq, key, owner, epoch, renewed_at, expires_at FROM lease_audit ORDER BY key, seq`)
	if err != nil {
		t.Fatal(err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowToStructByPos[version])
	if err != nil {
		t.Fatal(err)
	}
	return versions
}

// checkTenures checks the versions of each key, in order: a tenure (one
// epoch) has one owner; the next starts with the next epoch, at or after
// the last expiry of the one before, which nothing moves later. It returns
// how many tenures there were, and how many began with a new owner.
func checkTenures(t *testing.T, versions []version) (tenures, handovers int) {
	is := is.New(t)
	for i, v := range versions {
		if i == 0 || versions[i-1].Key != v.Key {
			is.Equal(v.Epoch, int64(1)) // a key's first tenure
			tenures++
			continue
		}
		prev := versions[i-1]
		if v.Epoch == prev.Epoch {
			is.Equal(v.Owner, prev.Owner) // one owner per tenure
			continue
		}
		tenures++
		if v.Owner != prev.Owner {
			handovers++
		}
		is.Equal(v.Epoch, prev.Epoch+1) // the next epoch, never an old one
		if v.RenewedAt.Before(prev.ExpiresAt) {
			t.Fatalf("on %s, %s's tenure %d began at %s, before %s's tenure %d ended at %s",
				v.Key, v.Owner, v.Epoch, v.RenewedAt.Format(time.RFC3339Nano),
				prev.Owner, prev.Epoch, prev.ExpiresAt.Format(time.RFC3339Nano))
		}
	}
	return tenures, handovers
}
