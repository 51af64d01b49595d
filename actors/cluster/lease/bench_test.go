package lease_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
)

// keeperKeys is how many leases BenchmarkLeases renews in one statement,
// as a keeper of a node with that many connections does.
const keeperKeys = 10_000

// benchKeys numbers the keys that BenchmarkLeases acquires.
var benchKeys atomic.Int64

// BenchmarkLeases measures, on a local server, a key's acquisition and
// renewal against two baselines of the same run: a round trip (SELECT 1)
// and a one-row durable commit (an UPDATE). "renew-10000" renews 10,000
// leases in one statement, as a keeper does, and reports the cost per key
// beside "renew"'s one. "durable" syncs each commit to disk, as leases
// need; "no-fsync" keeps synchronous_commit on but a server without fsync,
// which leaves the cost of the statements themselves.
func BenchmarkLeases(b *testing.B) {
	for _, mode := range []struct {
		name string
		opts []pgtest.Option
	}{{"durable", []pgtest.Option{pgtest.Durable()}}, {"no-fsync", nil}} {
		b.Run(mode.name, func(b *testing.B) {
			srv := pgtest.Start(b, mode.opts...)
			table, pool := openTable(b, srv, "")
			ctx := b.Context()
			if _, err := pool.Exec(ctx, `CREATE TABLE bench_counter (id int PRIMARY KEY, n bigint NOT NULL);
				INSERT INTO bench_counter VALUES (1, 0)`); err != nil {
				b.Fatal(err)
			}
			b.Run("roundtrip", func(b *testing.B) {
				for b.Loop() {
					if _, err := pool.Exec(ctx, `SELECT 1`); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("commit", func(b *testing.B) {
				for b.Loop() {
					if _, err := pool.Exec(ctx, `UPDATE bench_counter SET n = n + 1 WHERE id = 1`); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("acquire+renew", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() { // a new key each time, -count's runs included
					l, err := table.Acquire(ctx, "conn-"+strconv.FormatInt(benchKeys.Add(1), 10), "node-a", time.Minute)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := table.Renew(ctx, l); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("renew", func(b *testing.B) {
				l, err := table.Acquire(ctx, "renewed", "node-a", time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if l, err = table.Renew(ctx, l); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/key")
			})
			b.Run("renew-10000", func(b *testing.B) {
				leases := keeperLeases(b, pool, keeperKeys)
				b.ReportAllocs()
				for b.Loop() {
					renewed, lost, err := table.RenewAll(ctx, leases)
					if err != nil || len(lost) > 0 || len(renewed) != len(leases) {
						b.Fatalf("renewed %d, lost %d: %v", len(renewed), len(lost), err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(leases)), "ns/key")
			})
		})
	}
}

// keeperLeases grants n keys to node-b for an hour, in one statement, at
// epoch 1 (the same keys for each of -count's runs).
func keeperLeases(b *testing.B, pool *pgxpool.Pool, n int) []lease.Lease {
	b.Helper()
	if _, err := pool.Exec(b.Context(), `INSERT INTO leases (key, owner, epoch, renewed_at, expires_at)
		SELECT 'keeper-' || i, 'node-b', 1, clock_timestamp(), clock_timestamp() + interval '1 hour'
		FROM generate_series(0, $1 - 1) AS i
		ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, epoch = 1, renewed_at = excluded.renewed_at, expires_at = excluded.expires_at`,
		n); err != nil {
		b.Fatal(err)
	}
	leases := make([]lease.Lease, n)
	for i := range leases {
		leases[i] = lease.Lease{Key: "keeper-" + strconv.Itoa(i), Owner: "node-b", Epoch: 1, TTL: time.Minute}
	}
	return leases
}
