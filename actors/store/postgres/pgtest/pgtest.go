// Package pgtest runs a throwaway PostgreSQL server for tests: Start
// initdb's a cluster in a temporary folder and runs postgres on a unix
// socket there, reachable by no other address; NewDatabase gives each test
// its own database. Both go when the test that made them ends.
//
// The server comes from the machine's PostgreSQL binaries (initdb on PATH,
// else the newest /usr/lib/postgresql/*/bin). Without them a test skips,
// or fails when CI=true, so that CI never passes by skipping. As root it
// runs the server as the postgres user, since initdb refuses root.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Bounds of the waits for the server.
const (
	initTimeout  = 2 * time.Minute  // initdb
	readyTimeout = 30 * time.Second // from postgres starting to accepting connections
	stopTimeout  = 30 * time.Second // for each of a fast and an immediate shutdown
	queryTimeout = 30 * time.Second // CREATE and DROP DATABASE
)

// Superuser is the server's superuser role, which every DSN connects as.
const Superuser = "mcpflow"

// port names the socket file (.s.PGSQL.5432); the server listens on no
// TCP port.
const port = 5432

// Server is a running throwaway PostgreSQL server.
type Server struct {
	dir       string // data, socket and log
	bin       string // the folder of initdb, postgres and pg_dump
	cmd       *exec.Cmd
	exited    chan struct{} // closed once cmd has been waited for
	waitErr   error         // how postgres exited; read after exited closes
	databases atomic.Int64  // names NewDatabase's databases
}

// Option changes how Start runs the server.
type Option func(*settings)

// settings are the server's configuration parameters (postgres -c).
type settings map[string]string

// SynchronousCommit is the DSN parameter, to append to NewDatabase's DSN,
// of connections whose commits wait for the WAL: the servers Start runs
// commit without waiting by default, which a lease table
// (actors/cluster/lease) refuses.
const SynchronousCommit = " synchronous_commit=on"

// Durable keeps PostgreSQL's durability settings (fsync, synchronous
// commit, full page writes), which Start otherwise turns off for speed: a
// benchmark set against another durable store wants them on.
func Durable() Option {
	return func(s *settings) {
		for _, name := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
			delete(*s, name)
		}
	}
}

// Start starts a server for tb and its subtests; it stops and is removed
// when tb ends. It skips tb when no PostgreSQL binaries are found, unless
// CI=true, where that fails tb.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	bin := findBinDir()
	if bin == "" {
		const msg = "no PostgreSQL server binaries (initdb, postgres) on PATH or under /usr/lib/postgresql/*/bin: " +
			"install Debian's postgresql package (apt-get install postgresql)"
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	acct, err := serverAccount()
	if err != nil {
		tb.Fatal(err)
	}
	conf := settings{
		"listen_addresses":   "", // the socket only
		"max_connections":    "300",
		"shared_buffers":     "32MB",
		"fsync":              "off",
		"synchronous_commit": "off",
		"full_page_writes":   "off",
	}
	for _, opt := range opts {
		opt(&conf)
	}
	s, err := start(tb.Context(), bin, acct, conf)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.stop(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// start makes the cluster and starts postgres on it.
func start(ctx context.Context, bin string, acct account, conf settings) (_ *Server, err error) {
	dir, err := os.MkdirTemp("", "mcpflow-pg-")
	if err != nil {
		return nil, fmt.Errorf("make the server's folder: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, os.RemoveAll(dir))
		}
	}()
	if err := acct.own(dir); err != nil {
		return nil, fmt.Errorf("give %s to the server's user: %w", dir, err)
	}
	data := filepath.Join(dir, "data")
	initCtx, cancel := context.WithTimeout(ctx, initTimeout)
	defer cancel()
	initdb := exec.CommandContext(initCtx, filepath.Join(bin, "initdb"), "--pgdata", data, "--username", Superuser,
		"--auth", "trust", "--encoding", "UTF8", "--locale", "C.UTF-8", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = acct.attrs()
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}

	logFile, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return nil, fmt.Errorf("make the server's log: %w", err)
	}
	defer logFile.Close() // postgres has its own descriptor
	args := []string{"-D", data, "-k", dir, "-p", fmt.Sprint(port)}
	for name, value := range conf {
		args = append(args, "-c", name+"="+value)
	}
	postgres := exec.Command(filepath.Join(bin, "postgres"), args...)
	postgres.SysProcAttr = acct.attrs()
	postgres.Stdout, postgres.Stderr = logFile, logFile
	if err := postgres.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	s := &Server{dir: dir, bin: bin, cmd: postgres, exited: make(chan struct{})}
	go func() { // ends when postgres does, which stop sees to
		s.waitErr = postgres.Wait()
		close(s.exited)
	}()
	if err := s.awaitReady(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("%w\n%s", err, s.logTail()), s.kill())
	}
	return s, nil
}

// awaitReady polls until the server accepts a connection, it exits, or
// readyTimeout passes.
func (s *Server) awaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := pgx.Connect(ctx, s.DSN("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited before it accepted connections: %v", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("postgres accepted no connection within %s: %w", readyTimeout, err)
		case <-tick.C:
		}
	}
}

// DSN is the connection string of database on the server, as the
// superuser, over the socket.
func (s *Server) DSN(database string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", s.dir, port, Superuser, database)
}

// DatabaseOption is a clause of the CREATE DATABASE that NewDatabase runs.
type DatabaseOption string

// ICUCollation makes a database's default collation the ICU one of locale
// ("en-US"), which orders text as people read it rather than as bytes.
func ICUCollation(locale string) DatabaseOption {
	return DatabaseOption(fmt.Sprintf("TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '%s'", strings.ReplaceAll(locale, "'", "''")))
}

// NewDatabase creates an empty database for tb and returns its DSN; it is
// dropped when tb ends, after tb's own cleanups (which close what tb
// opened on it).
func (s *Server) NewDatabase(tb testing.TB, opts ...DatabaseOption) string {
	tb.Helper()
	name := fmt.Sprintf("test_%d", s.databases.Add(1))
	clauses := ""
	for _, o := range opts {
		clauses += " " + string(o)
	}
	if err := s.exec(tb.Context(), "CREATE DATABASE "+name+clauses); err != nil {
		tb.Fatalf("create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		// tb's context is done by now.
		if err := s.exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop database %s: %v", name, err)
		}
	})
	return s.DSN(name)
}

// Dump returns what pg_dump (the one beside initdb) writes of the
// database dsn names, as a backup of it would hold it.
func (s *Server) Dump(tb testing.TB, dsn string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), initTimeout)
	defer cancel()
	var stderr strings.Builder
	dump := exec.CommandContext(ctx, tool(s.bin, "pg_dump"), "--dbname", dsn)
	dump.Stderr = &stderr
	out, err := dump.Output()
	if err != nil {
		tb.Fatalf("pg_dump: %v\n%s", err, stderr.String())
	}
	return out
}

// exec runs one statement on the postgres database, within queryTimeout.
func (s *Server) exec(ctx context.Context, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, sql)
	return errors.Join(err, conn.Close(ctx))
}

// stop shuts the server down (fast, then immediate, then killed) and
// removes its folder.
func (s *Server) stop() error {
	err := s.shutdown()
	if err != nil {
		err = fmt.Errorf("%w\n%s", err, s.logTail())
	}
	return errors.Join(err, os.RemoveAll(s.dir))
}

// shutdown asks for a fast shutdown (SIGINT), then an immediate one
// (SIGQUIT), each waited for up to stopTimeout, then kills postgres.
func (s *Server) shutdown() error {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGQUIT} {
		if err := s.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("signal postgres: %w", err)
		}
		select {
		case <-s.exited:
			return nil
		case <-time.After(stopTimeout):
		}
	}
	return errors.Join(fmt.Errorf("postgres did not shut down within %s", 2*stopTimeout), s.kill())
}

// kill kills postgres and waits for it, up to stopTimeout.
func (s *Server) kill() error {
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill postgres: %w", err)
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(stopTimeout):
		return fmt.Errorf("postgres (pid %d) did not exit when killed", s.cmd.Process.Pid)
	}
}

// logTail is the end of the server's log, for an error that needs it.
func (s *Server) logTail() string {
	const max = 4 << 10
	data, err := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
	if err != nil {
		return "(no server log: " + err.Error() + ")"
	}
	if len(data) > max {
		data = data[len(data)-max:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return "server log:\n" + string(data)
}
