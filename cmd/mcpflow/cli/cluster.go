package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/actors/cluster/membership"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
)

// newClusterCommand holds the cluster subcommands.
func newClusterCommand() *cobra.Command {
	cmd := newGroup("cluster", "Inspect a cluster of mcpflow nodes", newClusterStatusCommand())
	cmd.GroupID = groupServer
	return cmd
}

// clusterStatus is what `mcpflow cluster status` was asked.
type clusterStatus struct {
	configPath, output string
	timeout            time.Duration
}

// newClusterStatusCommand is `mcpflow cluster status --config FILE`.
func newClusterStatusCommand() *cobra.Command {
	var s clusterStatus
	cmd := &cobra.Command{
		Use:   "status --config FILE",
		Short: "Show the cluster's members and leases, from its database",
		Long: `Show the members of a cluster and the leases its nodes hold, as its
PostgreSQL database has them: the store of the config (server.store, kind
"postgres"), which needs no node to be running.

Members are the nodes that registered, each with its addresses and whether
its node lease is live (a node is a member while it is), with the lease's
epoch and time left. Leases are every key a node owns or owned: its owner,
epoch (the tenure), whether it is live and its time left, and the last
session generation opened under it. Times are the database's.`,
		Example: `  mcpflow cluster status --config /etc/mcpflow/mcpflow.json
  mcpflow cluster status --config mcpflow.json -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return s.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&s.configPath, "config", "", "the config file of the cluster's nodes")
	addOutputFlag(f, &s.output)
	f.DurationVar(&s.timeout, "timeout", 30*time.Second, "deadline for reading the database")
	_ = cmd.MarkFlagRequired("config")
	_ = cmd.MarkFlagFilename("config", "json")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(outputTable, outputJSON))
	return cmd
}

// clusterStatusResult is what `cluster status -o json` prints.
type clusterStatusResult struct {
	Database string              `json:"database"` // without password
	Members  []clusterMemberJSON `json:"members"`
	Leases   []clusterLeaseJSON  `json:"leases"`
}

// clusterMemberJSON is a member as `cluster status -o json` prints it.
type clusterMemberJSON struct {
	NodeID         string    `json:"node_id"`
	ClusterAddress string    `json:"cluster_address"`
	HTTPAddress    string    `json:"http_address"`
	Live           bool      `json:"live"`
	Epoch          int64     `json:"epoch"`
	RemainingMS    int64     `json:"remaining_ms"`
	StartedAt      time.Time `json:"started_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// clusterLeaseJSON is a lease as `cluster status -o json` prints it.
type clusterLeaseJSON struct {
	Key         string    `json:"key"`
	Owner       string    `json:"owner"`
	Epoch       int64     `json:"epoch"`
	Live        bool      `json:"live"`
	RemainingMS int64     `json:"remaining_ms"`
	RenewedAt   time.Time `json:"renewed_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	Generation  int64     `json:"generation"`
}

// run reads the members and leases and prints them.
func (s clusterStatus) run(ctx context.Context, out io.Writer) error {
	if err := checkOutputAndTimeout(s.output, s.timeout); err != nil {
		return err
	}
	cfg, err := config.Load(s.configPath)
	if err != nil {
		return err
	}
	if kind := cfg.Server.Store.Kind; kind != config.StorePostgres {
		return fmt.Errorf("%s: the store is %s, not %s: a cluster's nodes share a PostgreSQL store", s.configPath, firstSet(kind, config.StoreSQLite), config.StorePostgres)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	res, err := readClusterStatus(ctx, cfg.Server.Store.DSN)
	if err != nil {
		return err
	}
	if s.output == outputJSON {
		return printJSON(out, res)
	}
	return printClusterStatus(out, res)
}

// readClusterStatus reads the members and leases of the database dsn
// names; its errors name the database, never the dsn.
func readClusterStatus(ctx context.Context, dsn string) (clusterStatusResult, error) {
	res := clusterStatusResult{Database: postgres.ShowDSN(dsn), Members: []clusterMemberJSON{}, Leases: []clusterLeaseJSON{}}
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		return res, err
	}
	defer st.Close()
	reg := membership.NewRegistry(st.Pool())
	members, err := reg.All(ctx)
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Database, err)
	}
	leases, err := reg.Leases(ctx)
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Database, err)
	}
	for _, m := range members {
		res.Members = append(res.Members, clusterMemberJSON{
			NodeID: m.NodeID, ClusterAddress: m.ClusterAddress, HTTPAddress: m.HTTPAddress,
			Live: m.Live, Epoch: m.Epoch, RemainingMS: m.Remaining.Milliseconds(), StartedAt: m.StartedAt, UpdatedAt: m.UpdatedAt,
		})
	}
	for _, l := range leases {
		res.Leases = append(res.Leases, clusterLeaseJSON{
			Key: l.Key, Owner: l.Owner, Epoch: l.Epoch, Live: l.Live, RemainingMS: l.Remaining.Milliseconds(),
			RenewedAt: l.RenewedAt, ExpiresAt: l.ExpiresAt, Generation: l.Generation,
		})
	}
	return res, nil
}

// printClusterStatus prints the members, then the leases, a table each.
func printClusterStatus(w io.Writer, res clusterStatusResult) error {
	t := newTable(w)
	t.line("cluster of %s: %d of %d members live, %d of %d leases live",
		res.Database, countLive(res.Members, func(m clusterMemberJSON) bool { return m.Live }), len(res.Members),
		countLive(res.Leases, func(l clusterLeaseJSON) bool { return l.Live }), len(res.Leases))
	t.line("")
	t.row("NODE", "CLUSTER ADDRESS", "HTTP ADDRESS", "LIVE", "EPOCH", "TIME LEFT", "STARTED")
	for _, m := range res.Members {
		t.row(m.NodeID, m.ClusterAddress, m.HTTPAddress, m.Live, m.Epoch, timeLeft(m.Live, m.RemainingMS), m.StartedAt.Local().Format(time.DateTime))
	}
	t.line("")
	t.row("KEY", "OWNER", "EPOCH", "LIVE", "TIME LEFT", "GENERATION")
	for _, l := range res.Leases {
		t.row(l.Key, l.Owner, l.Epoch, l.Live, timeLeft(l.Live, l.RemainingMS), l.Generation)
	}
	return t.flush()
}

// countLive counts the items that are live.
func countLive[T any](items []T, live func(T) bool) int {
	n := 0
	for _, item := range items {
		if live(item) {
			n++
		}
	}
	return n
}

// timeLeft is a live lease's time left, to the tenth of a second; "-" for
// one that is not live.
func timeLeft(live bool, ms int64) string {
	if !live {
		return "-"
	}
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
}
