package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
)

// envPGDSN is the environment variable that holds a PostgreSQL DSN, as
// the config's ${MCPFLOW_PG_DSN} reads it.
const envPGDSN = "MCPFLOW_PG_DSN"

// sqliteMagic begins every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// newStoreCommand holds the store subcommands.
func newStoreCommand() *cobra.Command {
	cmd := newGroup("store", "Work with mcpflow's record store", newStoreMigrateCommand())
	cmd.GroupID = groupServer
	return cmd
}

// storeMigrate is what `mcpflow store migrate` was asked.
type storeMigrate struct {
	from, to, output string
	timeout          time.Duration
}

// newStoreMigrateCommand is `mcpflow store migrate --from SQLITE --to DSN`.
func newStoreMigrateCommand() *cobra.Command {
	var m storeMigrate
	cmd := &cobra.Command{
		Use:   "migrate --from SQLITE [--to DSN]",
		Short: "Copy a SQLite store into PostgreSQL and verify the counts",
		Long: `Copy every record of a SQLite store into a PostgreSQL database: workspaces,
artifacts, deployments, runs with their traces and event logs, catalogs,
auth records (secrets included), the source registry and the admin event
log. Keys and event numbers are kept, so clients' cursors stay good.

--from is the SQLite store: its database file, its store root folder, or an
mcpflow config whose store it is. It is locked while it is read, so stop the
server that uses it first. --to is the PostgreSQL DSN (a postgres:// URL or
key=value pairs), by default $` + envPGDSN + `: prefer the variable, since
a password on the command line shows in the process list. The database must
be empty; its schema is created as 'mcpflow serve' would.

The copy is one transaction. Before it commits, the records of each kind in
PostgreSQL are counted against those read: any difference fails the copy and
leaves the database as it was. Then point the config at PostgreSQL:
  "store": {"kind": "postgres", "dsn": "${` + envPGDSN + `}"}`,
		Example: `  MCPFLOW_PG_DSN='postgres://mcpflow:PASSWORD@db.internal:5432/mcpflow' \
    mcpflow store migrate --from .mcpflow
  mcpflow store migrate --from mcpflow.json -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return m.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&m.from, "from", "", "the SQLite store: its database file, its store root, or a config file naming it")
	f.StringVar(&m.to, "to", "", "the PostgreSQL DSN to copy into (default $"+envPGDSN+")")
	addOutputFlag(f, &m.output)
	f.DurationVar(&m.timeout, "timeout", 30*time.Minute, "deadline for the whole copy")
	_ = cmd.MarkFlagRequired("from")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(outputTable, outputJSON))
	return cmd
}

// migrateResult is what `store migrate -o json` prints.
type migrateResult struct {
	From   string          `json:"from"`
	To     string          `json:"to"` // without password
	Copied postgres.Counts `json:"copied"`
	Total  int             `json:"total"`
}

// run copies the store and prints what it copied. SIGINT or SIGTERM
// cancels the copy, which then leaves PostgreSQL as it was.
func (m storeMigrate) run(ctx context.Context, out io.Writer) error {
	if err := checkOutputAndTimeout(m.output, m.timeout); err != nil {
		return err
	}
	dsn := firstSet(m.to, os.Getenv(envPGDSN))
	if dsn == "" {
		return errors.New("no PostgreSQL store to copy into: give --to DSN or set $" + envPGDSN)
	}
	root, file, err := sqliteStore(m.from)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()

	lock, err := app.LockStore(root)
	if err != nil {
		return err
	}
	defer lock.Release()
	src, err := sqlite.Open(ctx, file)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer dst.Close()
	copied, err := dst.CopyFrom(ctx, src)
	if err != nil {
		return fmt.Errorf("copy %s into %s: %w", file, postgres.ShowDSN(dsn), err)
	}
	res := migrateResult{From: file, To: postgres.ShowDSN(dsn), Copied: copied, Total: copied.Total()}
	if m.output == outputJSON {
		return printJSON(out, res)
	}
	return printMigrateResult(out, res)
}

// printMigrateResult prints what was copied, a kind to a line.
func printMigrateResult(w io.Writer, res migrateResult) error {
	t := newTable(w)
	t.line("copied %d records from %s into %s; the counts match", res.Total, res.From, res.To)
	c := res.Copied
	t.row("KIND", "RECORDS")
	for _, kind := range []struct {
		name string
		n    int
	}{
		{"workspaces", c.Workspaces}, {"artifacts", c.Artifacts}, {"deployments", c.Deployments},
		{"runs", c.Runs}, {"trace entries", c.TraceEntries}, {"run events", c.RunEvents},
		{"catalogs", c.Catalogs}, {"auth records", c.AuthRecords}, {"registry entries", c.RegistryEntries},
		{"events", c.Events},
	} {
		t.row(kind.name, kind.n)
	}
	return t.flush()
}

// sqliteStore finds the SQLite store that from names (its database file,
// its store root, or a config file whose store it is) and returns its
// root, which holds its lock, and its database file, which must exist.
func sqliteStore(from string) (root, file string, err error) {
	info, err := os.Stat(from)
	if err != nil {
		return "", "", fmt.Errorf("--from: %w", err)
	}
	switch {
	case info.IsDir():
		root, file = from, filepath.Join(from, app.DatabaseFile)
	case isSQLite(from):
		root, file = filepath.Dir(from), from
	default:
		cfg, err := config.Load(from)
		if err != nil {
			return "", "", fmt.Errorf("--from is neither a SQLite database nor a store root, nor a config: %w", err)
		}
		if kind := cfg.Server.Store.Kind; kind != "" && kind != config.StoreSQLite {
			return "", "", fmt.Errorf("--from %s: its store is %s, not sqlite", from, kind)
		}
		root = cfg.StoreRoot()
		file = filepath.Join(root, app.DatabaseFile)
	}
	// Opening a file that is not there would make an empty store.
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("--from: no SQLite store at %s", file)
	} else if err != nil {
		return "", "", fmt.Errorf("--from: %w", err)
	}
	return root, file, nil
}

// isSQLite reports whether the file at path begins as a SQLite database.
func isSQLite(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	_, err = io.ReadFull(f, head)
	return err == nil && bytes.Equal(head, sqliteMagic)
}
