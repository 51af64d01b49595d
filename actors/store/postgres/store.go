// Package postgres implements store.Store on PostgreSQL (jackc/pgx v5 and
// its pool). Each record is kept as the JSON text encoding/json wrote
// (a run's, its trace entries' and its events' packed: store.Values.Pack,
// store.EncodeRunEvent), beside the columns its keys, filters and
// orderings need; compare-and-set,
// filters and paging run in SQL; a run's steps commit in one transaction
// with its trace and events. Open migrates the schema (embedded, versioned
// SQL files) under an advisory lock, so nodes that start at once on one
// database are safe.
//
// A store opened for a node of a cluster (WithNode) commits only the runs
// that node executes (runs.node): see RecordProgress and ClaimRuns.
//
// A DSN holds a password: errors and logs name a database by ShowDSN,
// never by its DSN.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcpflow/mcpflow/actors/store"
)

// Store is a store.Store on one PostgreSQL database, through a pool of
// connections. It is safe for concurrent use, from one process or many.
type Store struct {
	pool      *pgxpool.Pool
	maxEvents int           // see store.Options
	retention time.Duration // see store.Options
	node      string        // see WithNode
	member    *memberFence  // see WithMembership; nil for none
	sealer    store.Sealer  // seals auth payloads and registry secrets; nil keeps them as given
	// announce tells the other nodes of each commit; nil for a store of
	// one node alone.
	announce *announcer
}

var (
	_ store.Store      = (*Store)(nil)
	_ store.RunClaimer = (*Store)(nil)
	_ store.Resealer   = (*Store)(nil)
)

// Open connects to the database that dsn names (a postgres:// URL or
// key=value pairs, as libpq takes them; pool_max_conns and the other
// pgxpool settings may be added) and migrates its schema to the current
// version. The database must be UTF-8: records are text. With a sealer
// (store.WithSealer), every auth record and registry entry kept in clear
// or under an older key is sealed under the current key before Open
// returns; one that does not open (its key is missing or wrong) fails
// Open and changes no record.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	o := newOptions(opts...)
	cfg, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	s, err := open(ctx, cfg, o)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", showConfig(cfg.ConnConfig), err)
	}
	return s, nil
}

// open does the work of Open: after migrating, it numbers the admin
// events that a node which stopped between a commit and its numbering
// left queued.
func open(ctx context.Context, cfg *pgxpool.Config, o options) (*Store, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	member, err := newMemberFence(o.member, o.node)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{pool: pool, maxEvents: o.store.MaxEvents, retention: o.store.Retention, node: o.node, member: member, sealer: o.store.Sealer}
	if err := s.checkEncoding(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if err := migrate(ctx, pool, s.retention); err != nil {
		pool.Close()
		return nil, err
	}
	if s.sealer != nil {
		if _, err := s.Reseal(ctx); err != nil {
			pool.Close()
			return nil, err
		}
	}
	if _, err := s.numberEvents(ctx, nil); err != nil {
		pool.Close()
		return nil, fmt.Errorf("number the queued admin events: %w", err)
	}
	if s.node != "" {
		s.announce = newAnnouncer(pool)
	}
	return s, nil
}

// checkEncoding refuses a database whose encoding is not UTF-8, where a
// record could fail to store or read back changed.
func (s *Store) checkEncoding(ctx context.Context) error {
	var encoding string
	if err := s.pool.QueryRow(ctx, `SHOW server_encoding`).Scan(&encoding); err != nil {
		return err
	}
	if encoding != "UTF8" {
		return errors.New("the database's encoding is " + encoding + ", not UTF8 (CREATE DATABASE ... ENCODING 'UTF8')")
	}
	return nil
}

// Pool is the store's connection pool, for the packages that keep tables
// of their own in its database (the cluster's leases). Close closes it.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the pool's connections, waiting for those in use.
func (s *Store) Close() error {
	s.announce.stop()
	s.pool.Close()
	return nil
}

// AnnounceChange tells the other nodes of the cluster, on EventsChannel,
// of a change of kind (Change*) to what they cache; nothing for a store
// of one node alone. The store announces its own writes; this is for a
// change it cannot see, such as sources applied from the registry.
func (s *Store) AnnounceChange(kind, id string) { s.announce.change(kind, id) }

// announced announces a change of kind to id once a write succeeded
// (err nil), and returns err.
func (s *Store) announced(err error, kind, id string) error {
	if err == nil {
		s.announce.change(kind, id)
	}
	return err
}
