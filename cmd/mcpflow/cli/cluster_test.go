package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/cluster/lease"
	"github.com/mcpflow/mcpflow/actors/cluster/membership"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
)

// clusterPassword is in the test's DSNs, and in no output.
const clusterPassword = "pw-c1u5"

// TestClusterStatus shows the members and leases of a real database, as
// a table and as JSON, never with the DSN's password.
func TestClusterStatus(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	srv := pgtest.Start(t)
	// The server trusts its socket and ignores the password; the leases
	// need durable commits.
	dsn := srv.NewDatabase(t) + pgtest.SynchronousCommit + " password=" + clusterPassword
	st, err := postgres.Open(ctx, dsn)
	is.NoErr(err)
	defer st.Close()
	table, err := lease.New(ctx, st.Pool())
	is.NoErr(err)
	reg := membership.NewRegistry(st.Pool())
	is.NoErr(reg.Register(ctx, membership.Member{NodeID: "node-a", ClusterAddress: "10.0.0.1:7000", HTTPAddress: "10.0.0.1:8765"}))
	is.NoErr(reg.Register(ctx, membership.Member{NodeID: "node-b", ClusterAddress: "10.0.0.2:7000"}))
	_, err = table.Acquire(ctx, membership.NodeKey("node-a"), "node-a", time.Minute)
	is.NoErr(err)
	b, err := table.Acquire(ctx, membership.NodeKey("node-b"), "node-b", time.Minute)
	is.NoErr(err)
	is.NoErr(table.Release(ctx, b)) // node-b stopped
	conn, err := table.Acquire(ctx, "conn.one", "node-a", time.Minute)
	is.NoErr(err)
	for range 3 {
		_, err = table.NextGeneration(ctx, conn)
		is.NoErr(err)
	}
	t.Setenv(envPGDSN, dsn)
	cfg := writeConfig(t, `{"version":1,"server":{"store":{"kind":"postgres","dsn":"${MCPFLOW_PG_DSN}"},
		"cluster":{"node_id":"node-a","listen":"10.0.0.1:7000"}}}`)

	code, out, errOut := runCLI("cluster", "status", "--config", cfg)
	is.Equal(errOut, "")
	is.Equal(code, ExitOK)
	is.True(strings.Contains(out, "1 of 2 members live, 2 of 3 leases live")) // the summary
	lines := strings.Split(out, "\n")
	is.True(rowWith(lines, "node-a", "10.0.0.1:7000", "10.0.0.1:8765", "yes", "1"))
	is.True(rowWith(lines, "node-b", "10.0.0.2:7000", "-", "no", "1", "-")) // no HTTP address, no time left
	is.True(rowWith(lines, "conn.one", "node-a", "1", "yes", "*", "3"))     // generation 3
	is.True(rowWith(lines, "node/node-b", "node-b", "1", "no", "-", "0"))
	is.True(!strings.Contains(out, clusterPassword)) // never the password

	code, out, _ = runCLI("cluster", "status", "--config", cfg, "-o", "json")
	is.Equal(code, ExitOK)
	var res clusterStatusResult
	is.NoErr(json.Unmarshal([]byte(out), &res))
	is.True(!strings.Contains(res.Database, clusterPassword))
	is.Equal(len(res.Members), 2)
	a := res.Members[0]
	is.Equal([]any{a.NodeID, a.ClusterAddress, a.HTTPAddress, a.Live, a.Epoch}, []any{"node-a", "10.0.0.1:7000", "10.0.0.1:8765", true, int64(1)})
	is.True(a.RemainingMS > 0 && a.RemainingMS <= time.Minute.Milliseconds()) // its time left
	is.True(!a.StartedAt.IsZero())
	is.Equal(len(res.Leases), 3)
	l := res.Leases[0]
	is.Equal([]any{l.Key, l.Owner, l.Epoch, l.Live, l.Generation}, []any{"conn.one", "node-a", int64(1), true, int64(3)})
	is.Equal(res.Leases[2].RemainingMS, int64(0)) // node-b's, released
}

// TestClusterStatusRefuses a config whose store is not PostgreSQL, and a
// database it cannot reach, whose password no error shows.
func TestClusterStatusRefuses(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		is := is.New(t)
		cfg := writeConfig(t, `{"version":1,"server":{"store":{"root":"`+t.TempDir()+`"}}}`)
		code, _, errOut := runCLI("cluster", "status", "--config", cfg)
		is.Equal(code, ExitError)
		is.True(strings.Contains(errOut, "the store is sqlite, not postgres")) // says why
	})
	t.Run("unreachable", func(t *testing.T) {
		is := is.New(t)
		t.Setenv(envPGDSN, "postgres://mcpflow:"+clusterPassword+"@127.0.0.1:1/mcpflow?connect_timeout=5")
		cfg := writeConfig(t, `{"version":1,"server":{"store":{"kind":"postgres","dsn":"${MCPFLOW_PG_DSN}"}}}`)
		code, _, errOut := runCLI("cluster", "status", "--config", cfg)
		is.Equal(code, ExitError)
		is.True(strings.Contains(errOut, "postgres://mcpflow@127.0.0.1:1/mcpflow")) // names the database
		is.True(!strings.Contains(errOut, clusterPassword))                         // never the password
	})
	t.Run("no config", func(t *testing.T) {
		is := is.New(t)
		code, _, errOut := runCLI("cluster", "status")
		is.Equal(code, ExitError)
		is.True(strings.Contains(errOut, `"config" not set`)) // says what is missing
	})
}

// writeConfig writes a config file and returns its path.
func writeConfig(t *testing.T, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcpflow.json")
	is.New(t).NoErr(os.WriteFile(path, []byte(doc), 0o600))
	return path
}

// rowWith reports whether one of lines has cells, in order, as its
// leading columns; a "*" cell matches any.
func rowWith(lines []string, cells ...string) bool {
	for _, line := range lines {
		fields := strings.Fields(line)
		if len(fields) >= len(cells) && slices.EqualFunc(fields[:len(cells)], cells, func(f, c string) bool { return c == "*" || f == c }) {
			return true
		}
	}
	return false
}
