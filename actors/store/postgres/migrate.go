package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// migrationFiles are the schema changes, migrations/NNNN_name.sql, applied
// in the order of NNNN, from 1 with no gap. Add new files; never edit one
// that has shipped.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one schema change.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations reads the embedded schema changes in order.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var list []migration
	for i, name := range names { // fs.Glob sorts
		base := path.Base(name)
		prefix, _, _ := strings.Cut(base, "_")
		version, err := strconv.Atoi(prefix)
		if err != nil || version != i+1 {
			return nil, fmt.Errorf("migration %s: want the version number %04d first", base, i+1)
		}
		sql, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		list = append(list, migration{version: version, name: strings.TrimSuffix(base, ".sql"), sql: string(sql)})
	}
	return list, nil
}

// migrationLock is the key of the transaction-level advisory lock that
// migrate holds: nodes starting at once on one database migrate one after
// the other, and each finds what the ones before it applied. ("mcpflow"
// in ASCII.)
const migrationLock int64 = 0x6d6370666c6f77

// migrationLockTimeout bounds the wait for the lock and for the tables a
// migration alters, which a running node may be reading.
const migrationLockTimeout = time.Minute

// retentionVersion is the schema version that adds runs.expires_at.
const retentionVersion = 5

// backfillExpiry gives the runs that ended before the schema had
// runs.expires_at their expiry: their end plus retention (0: kept for
// ever), in tx. Their deployments could not set a retention then.
func backfillExpiry(ctx context.Context, tx pgx.Tx, retention time.Duration) error {
	if retention <= 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE runs SET expires_at = updated_at + make_interval(secs => $1)
		WHERE status IN ('completed', 'failed', 'cancelled')`, retention.Seconds())
	if err != nil {
		return fmt.Errorf("give the finished runs their expiry: %w", err)
	}
	return nil
}

// migrate brings the schema to the newest version in one transaction,
// recording each version applied in schema_migrations. It refuses a
// database whose schema is newer than this build knows. retention is the
// store's (store.Options), which the runs that ended before the schema
// kept expiry times are given.
func migrate(ctx context.Context, db beginner, retention time.Duration) error {
	list, err := migrations()
	if err != nil {
		return err
	}
	return inTx(ctx, db, pgx.TxOptions{}, func(tx pgx.Tx) error {
		// SET takes no parameters; the value is a constant.
		if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL lock_timeout = %d", migrationLockTimeout.Milliseconds())); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return fmt.Errorf("wait for other nodes' migrations: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
			return fmt.Errorf("read the schema version: %w", err)
		}
		if current > len(list) {
			return fmt.Errorf("schema version %d is newer than this build knows (%d)", current, len(list))
		}
		for _, m := range list[current:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migrate the schema to version %d (%s): %w", m.version, m.name, err)
			}
			if m.version == retentionVersion {
				if err := backfillExpiry(ctx, tx, retention); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return err
			}
		}
		return nil
	})
}
