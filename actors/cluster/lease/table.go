package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Table is the leases table of one database. Each of its methods is one
// statement (Acquire may take a second to say who holds the key), and
// every time it compares is the database's clock_timestamp(). It is safe
// for concurrent use, from one process or many.
type Table struct {
	pool *pgxpool.Pool
}

// New returns the leases table of pool's database, which the postgres
// store's migrations created. It refuses connections whose commits are
// not durable (synchronous_commit off): a grant lost in a crash of the
// database could be granted again with the same epoch.
func New(ctx context.Context, pool *pgxpool.Pool) (*Table, error) {
	var sync string
	var exists bool
	err := pool.QueryRow(ctx, `SELECT current_setting('synchronous_commit'), to_regclass('leases') IS NOT NULL`).
		Scan(&sync, &exists)
	switch {
	case err != nil:
		return nil, fmt.Errorf("open the leases table: %w", err)
	case !exists:
		return nil, errors.New("open the leases table: the database has none: open the postgres store on it first, whose migrations create it")
	case sync == "off":
		return nil, errors.New("open the leases table: synchronous_commit is off, so a lease granted just before a crash of the database " +
			"could be granted again with the same epoch: connect with synchronous_commit on (the default)")
	}
	return &Table{pool: pool}, nil
}

// stamp is the SET clause that renews the row of alias (l. or empty): it
// reads the database's clock once, makes that renewed_at, and moves
// expires_at to ttl (an SQL expression) past it, never back.
func stamp(alias, ttl string) string {
	return `(renewed_at, expires_at) = (SELECT t.now, GREATEST(` + alias + `expires_at, t.now + ` + ttl + `)
		FROM (SELECT clock_timestamp() AS now) AS t)`
}

// acquireSQL grants key to owner when the key is free, its lease has
// expired, or owner holds it already. The epoch stays only when owner's
// lease is still live (a renewal); otherwise a new tenure starts with the
// next epoch. The expiry never moves back within a tenure. ($1 key, $2
// owner, $3 ttl.)
//
// The database's clock is read once, as the inserted row's renewed_at
// (excluded.renewed_at), and every comparison uses that reading: with a
// clock_timestamp() of their own, the expiry test could read a later
// time than the new tenure's start, and a tenure begin before the one it
// followed had ended.
var acquireSQL = `
INSERT INTO leases AS l (key, owner, epoch, renewed_at, expires_at)
SELECT $1, $2, 1, t.now, t.now + $3::interval FROM (SELECT clock_timestamp() AS now) AS t
ON CONFLICT (key) DO UPDATE SET
	epoch = CASE WHEN l.owner = excluded.owner AND l.expires_at > excluded.renewed_at THEN l.epoch ELSE l.epoch + 1 END,
	owner = excluded.owner,
	renewed_at = excluded.renewed_at,
	expires_at = GREATEST(l.expires_at, excluded.expires_at)
WHERE l.owner = excluded.owner OR l.expires_at <= excluded.renewed_at
RETURNING epoch, renewed_at, expires_at`

// acquireTries bounds Acquire's attempts when the lease that refused it
// has expired by the time Acquire reads who holds it. The last refusal is
// reported as ErrHeld, naming the holder and its expiry, just past.
const acquireTries = 3

// Acquire gives key to owner for ttl, from the database's time now: it
// succeeds when the key is free, its lease has expired, or owner holds it
// (which renews it, keeping its epoch). A new tenure gets an epoch greater
// than any before on key. When another owner holds a live lease, the error
// is a *HeldError (ErrHeld) that names it.
func (t *Table) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (Lease, error) {
	if err := validate(key, owner, ttl); err != nil {
		return Lease{}, fmt.Errorf("acquire lease %q: %w", key, err)
	}
	for try := 1; ; try++ {
		l := Lease{Key: key, Owner: owner, TTL: ttl}
		err := t.pool.QueryRow(ctx, acquireSQL, key, owner, ttl).Scan(&l.Epoch, &l.RenewedAt, &l.ExpiresAt)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Lease{}, fmt.Errorf("acquire lease %q for %q: %w", key, owner, err)
		}
		s, err := t.Get(ctx, key)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return Lease{}, fmt.Errorf("acquire lease %q for %q: %w", key, owner, err)
		}
		held := err == nil && s.Owner != owner
		if held && (s.Live || try == acquireTries) { // another owner's, live when refused
			return Lease{}, &HeldError{Key: key, Owner: s.Owner, Epoch: s.Epoch, ExpiresAt: s.ExpiresAt}
		}
		if try == acquireTries {
			return Lease{}, fmt.Errorf("acquire lease %q for %q: refused %d times, by leases gone when read", key, owner, try)
		}
	}
}

// renewSQL extends a live lease of the tenure ($1 key, $2 owner, $3 epoch)
// by $4, never moving its expiry back.
var renewSQL = `
UPDATE leases SET ` + stamp("", "$4::interval") + `
WHERE key = $1 AND owner = $2 AND epoch = $3 AND expires_at > clock_timestamp()
RETURNING renewed_at, expires_at`

// Renew extends l by its TTL from the database's time now, if it is still
// live and of the same owner and epoch (a compare-and-set); otherwise the
// error is ErrLost. A lease that expired stays lost even if nobody took
// its key: taking it again starts a new tenure.
func (t *Table) Renew(ctx context.Context, l Lease) (Lease, error) {
	if err := validate(l.Key, l.Owner, l.TTL); err != nil {
		return Lease{}, fmt.Errorf("renew lease %q: %w", l.Key, err)
	}
	err := t.pool.QueryRow(ctx, renewSQL, l.Key, l.Owner, l.Epoch, l.TTL).Scan(&l.RenewedAt, &l.ExpiresAt)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Lease{}, fmt.Errorf("renew lease %q of %q at epoch %d: %w", l.Key, l.Owner, l.Epoch, ErrLost)
	case err != nil:
		return Lease{}, fmt.Errorf("renew lease %q of %q: %w", l.Key, l.Owner, err)
	}
	return l, nil
}

// releaseSQL ends a live lease of the tenure ($1 key, $2 owner, $3 epoch)
// now. The row stays, so that the key's next tenure gets the next epoch.
const releaseSQL = `
UPDATE leases SET expires_at = LEAST(expires_at, clock_timestamp())
WHERE key = $1 AND owner = $2 AND epoch = $3 AND expires_at > clock_timestamp()`

// Release ends l now, so that another owner may take its key at once, if
// it is still live and of the same owner and epoch; otherwise the error is
// ErrLost.
func (t *Table) Release(ctx context.Context, l Lease) error {
	tag, err := t.pool.Exec(ctx, releaseSQL, l.Key, l.Owner, l.Epoch)
	switch {
	case err != nil:
		return fmt.Errorf("release lease %q of %q: %w", l.Key, l.Owner, err)
	case tag.RowsAffected() == 0:
		return fmt.Errorf("release lease %q of %q at epoch %d: %w", l.Key, l.Owner, l.Epoch, ErrLost)
	}
	return nil
}

// Check is the fence: it returns nil when epoch is the key's current one,
// ErrStale when a later tenure has superseded it, and ErrNotFound when the
// key has no lease of that epoch. It does not look at the expiry: an
// expired lease that nobody took over yet has no rival to fence it from.
func (t *Table) Check(ctx context.Context, key string, epoch int64) error {
	var current int64
	err := t.pool.QueryRow(ctx, `SELECT epoch FROM leases WHERE key = $1`, key).Scan(&current)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("check lease %q at epoch %d: %w", key, epoch, ErrNotFound)
	case err != nil:
		return fmt.Errorf("check lease %q: %w", key, err)
	case current > epoch:
		return fmt.Errorf("check lease %q: epoch %d, the key is at epoch %d: %w", key, epoch, current, ErrStale)
	case current < epoch:
		return fmt.Errorf("check lease %q at epoch %d, the key is at epoch %d: %w", key, epoch, current, ErrNotFound)
	}
	return nil
}

// statusColumns are what Get and List read, judged at the statement's
// database time.
const statusColumns = `key, owner, epoch, renewed_at, expires_at,
	expires_at > statement_timestamp(), GREATEST(expires_at - statement_timestamp(), interval '0')`

// Get reads key's lease; ErrNotFound when it never had one.
func (t *Table) Get(ctx context.Context, key string) (Status, error) {
	rows, err := t.pool.Query(ctx, `SELECT `+statusColumns+` FROM leases WHERE key = $1`, key)
	if err != nil {
		return Status{}, fmt.Errorf("read lease %q: %w", key, err)
	}
	s, err := pgx.CollectExactlyOneRow(rows, scanStatus)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Status{}, fmt.Errorf("read lease %q: %w", key, ErrNotFound)
	case err != nil:
		return Status{}, fmt.Errorf("read lease %q: %w", key, err)
	}
	return s, nil
}

// List reads every lease, live or not, in the order of their keys' bytes.
func (t *Table) List(ctx context.Context) ([]Status, error) {
	rows, err := t.pool.Query(ctx, `SELECT `+statusColumns+` FROM leases ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanStatus)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	return list, nil
}

// scanStatus reads a row of statusColumns.
func scanStatus(row pgx.CollectableRow) (Status, error) {
	var s Status
	err := row.Scan(&s.Key, &s.Owner, &s.Epoch, &s.RenewedAt, &s.ExpiresAt, &s.Live, &s.Remaining)
	return s, err
}

// validate refuses what no lease can be made of. The database keeps
// microseconds.
func validate(key, owner string, ttl time.Duration) error {
	switch {
	case key == "":
		return errors.New("the key is empty")
	case owner == "":
		return errors.New("the owner is empty")
	case ttl < time.Microsecond:
		return fmt.Errorf("the ttl %s is under the database's microsecond", ttl)
	}
	return nil
}
