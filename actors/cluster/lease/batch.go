package lease

import (
	"context"
	"fmt"
	"time"
)

// renewAllSQL is renewSQL for many tenures in one statement: the arrays
// $1 keys, $2 owners, $3 epochs and $4 ttls, element by element. It
// returns the tenures it renewed.
var renewAllSQL = `
UPDATE leases AS l SET ` + stamp("l.", "h.ttl") + `
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::interval[]) AS h (key, owner, epoch, ttl)
WHERE l.key = h.key COLLATE "C" AND l.owner = h.owner AND l.epoch = h.epoch AND l.expires_at > clock_timestamp()
RETURNING l.key, l.epoch, l.renewed_at, l.expires_at`

// RenewAll renews every lease of leases that is still live and of the same
// owner and epoch, as Renew would, in one statement. It returns those it
// renewed, as renewed, and the others, which are lost (ErrLost), in the
// order of leases.
func (t *Table) RenewAll(ctx context.Context, leases []Lease) (renewed, lost []Lease, err error) {
	if len(leases) == 0 {
		return nil, nil, nil
	}
	for _, l := range leases {
		if err := validate(l.Key, l.Owner, l.TTL); err != nil {
			return nil, nil, fmt.Errorf("renew %d leases: lease %q: %w", len(leases), l.Key, err)
		}
	}
	b := newBatch(leases)
	rows, err := t.pool.Query(ctx, renewAllSQL, b.keys, b.owners, b.epochs, b.ttls)
	if err != nil {
		return nil, nil, fmt.Errorf("renew %d leases: %w", len(leases), err)
	}
	type times struct {
		epoch              int64
		renewed, expiresAt time.Time
	}
	got := make(map[string]times, len(leases))
	var key string
	var tt times
	for rows.Next() {
		if err := rows.Scan(&key, &tt.epoch, &tt.renewed, &tt.expiresAt); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("renew %d leases: %w", len(leases), err)
		}
		got[key] = tt
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("renew %d leases: %w", len(leases), err)
	}
	renewed = make([]Lease, 0, len(got))
	for _, l := range leases {
		tt, ok := got[l.Key]
		if !ok || tt.epoch != l.Epoch {
			lost = append(lost, l)
			continue
		}
		l.RenewedAt, l.ExpiresAt = tt.renewed, tt.expiresAt
		renewed = append(renewed, l)
	}
	return renewed, lost, nil
}

// releaseAllSQL is releaseSQL for many tenures in one statement: the
// arrays $1 keys, $2 owners and $3 epochs, element by element.
const releaseAllSQL = `
UPDATE leases AS l SET expires_at = LEAST(l.expires_at, clock_timestamp())
FROM unnest($1::text[], $2::text[], $3::bigint[]) AS h (key, owner, epoch)
WHERE l.key = h.key COLLATE "C" AND l.owner = h.owner AND l.epoch = h.epoch AND l.expires_at > clock_timestamp()`

// ReleaseAll ends, in one statement, every lease of leases that is still
// live and of the same owner and epoch, as Release would; it returns how
// many it ended. The others had ended already.
func (t *Table) ReleaseAll(ctx context.Context, leases []Lease) (int, error) {
	if len(leases) == 0 {
		return 0, nil
	}
	b := newBatch(leases)
	tag, err := t.pool.Exec(ctx, releaseAllSQL, b.keys, b.owners, b.epochs)
	if err != nil {
		return 0, fmt.Errorf("release %d leases: %w", len(leases), err)
	}
	return int(tag.RowsAffected()), nil
}

// batch is leases as the column arrays that a statement on many of them
// takes.
type batch struct {
	keys, owners []string
	epochs       []int64
	ttls         []time.Duration
}

// newBatch lays leases out in arrays.
func newBatch(leases []Lease) batch {
	b := batch{
		keys:   make([]string, 0, len(leases)),
		owners: make([]string, 0, len(leases)),
		epochs: make([]int64, 0, len(leases)),
		ttls:   make([]time.Duration, 0, len(leases)),
	}
	for _, l := range leases {
		b.keys = append(b.keys, l.Key)
		b.owners = append(b.owners, l.Owner)
		b.epochs = append(b.epochs, l.Epoch)
		b.ttls = append(b.ttls, l.TTL)
	}
	return b
}
