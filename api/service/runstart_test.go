package service

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/runs"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// usedSource is the one source, of however many are configured, that the
// deployment "d" of manySources calls.
const usedSource = "src00005.default"

// manySources is a Service over n configured, catalogued stdio sources
// ("src00000.default", ...) of four tools each, with a deployment "d" of a
// workflow that calls usedSource's echo tool.
func manySources(tb testing.TB, n int) *Service {
	tb.Helper()
	return manySourcesOn(tb, n, store.NewMemory())
}

// manySourcesOn is manySources over st.
func manySourcesOn(tb testing.TB, n int, st store.Store) *Service {
	tb.Helper()
	is := is.New(tb)
	conns := make([]config.Connection, 0, n)
	snaps := make([]catalog.Snapshot, 0, n)
	for i := range n {
		id := fmt.Sprintf("src%05d.default", i)
		conns = append(conns, config.Connection{Kind: "mcp", ID: id, Transport: config.Transport{Kind: config.TransportStdio, Command: "fake"}})
		snaps = append(snaps, catalog.Snapshot{ConnectionID: id, MaxAgeSeconds: 300, Tools: []catalog.Tool{
			{Name: "echo", InputSchema: catalog.Object{"type": "object", "properties": catalog.Object{"message": catalog.Object{"type": "string"}}, "required": []any{"message"}},
				OutputSchema: catalog.Object{"type": "object", "properties": catalog.Object{"message": catalog.Object{"type": "string"}}}},
			{Name: "counter", InputSchema: catalog.Object{"type": "object"}, ReadOnly: true},
			{Name: "search", InputSchema: catalog.Object{"type": "object", "properties": catalog.Object{"q": catalog.Object{"type": "string"}}}},
			{Name: "fail"},
		}})
	}
	s := &Service{Store: st, Catalogs: catalog.NewRegistry(snaps), Connections: config.NewView(conns), RunWait: time.Second}
	s.Runs = runs.New(runs.Config{Store: s.Store, Catalogs: s.Catalogs, Connections: s.Connections})
	methods := s.Methods()
	for _, c := range []struct{ method, params string }{
		{protocol.MethodWorkspaceFromCapability, `{"workspace_id":"ws","capability_name":"` + usedSource + `.echo"}`},
		{protocol.MethodWorkspaceCreateArtifact, `{"workspace_id":"ws","artifact_id":"echo","version":1,"title":"Echo","outcomes":["ok"]}`},
		{protocol.MethodDeploymentsSave, `{"deployment":{"id":"d","artifact_id":"echo","artifact_version":1,"bindings":[{"logical_source":"` + usedSource + `","concrete_source":"` + usedSource + `"}]}}`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := methods[c.method].Handler(ctx, json.RawMessage(c.params))
		cancel()
		is.NoErr(err) // the deployment's workspace, artifact and deployment are saved
	}
	return s
}

// prepareRun resolves a deployment as workflow.runs.start does when it
// has none prepared (at its first run, or after a catalog, connection or
// deployment change): load the deployment and its artifact, check its
// dependencies against the live catalogs, and resolve its program.
func prepareRun(ctx context.Context, s *Service, id string) (*runs.Setup, error) {
	p, err := s.Runs.Resolve(ctx, id)
	if err != nil {
		return nil, err
	}
	if first, failed := runs.FirstError(p.Diagnostics); failed {
		return nil, fmt.Errorf("deployment %s is unrunnable: %s", id, first.Code)
	}
	return p.Setup()
}

// startAllocs is the allocations of one run start's preparation with n
// sources configured.
func startAllocs(t *testing.T, n int) float64 {
	is := is.New(t)
	s := manySources(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	setup, err := prepareRun(ctx, s, "d")
	is.NoErr(err) // the deployment is runnable
	c, ok := setup.Capability(usedSource + ".echo")
	is.True(ok)                                           // the setup has the contract of the tool the run calls
	is.Equal(c.InputSchema["required"], []any{"message"}) // as the catalog has it
	tg, ok := setup.Target(usedSource + ".echo")
	is.True(ok) // the setup resolves the tool the run calls
	is.Equal(tg.Connection, usedSource)
	return testing.AllocsPerRun(50, func() {
		if _, err := prepareRun(ctx, s, "d"); err != nil {
			t.Errorf("prepare run: %v", err)
		}
	})
}

// A run start's catalog work is what its deployment uses: with 10,000
// sources configured it allocates about what it does with 10 (within
// 1.5×), where it once rebuilt, sorted and indexed every capability.
func TestRunStartCostDoesNotGrowWithTheNumberOfSources(t *testing.T) {
	is := is.New(t)
	few, many := startAllocs(t, 10), startAllocs(t, 10_000)
	t.Logf("allocations per run start: %.0f with 10 sources, %.0f with 10,000", few, many)
	is.True(many <= 1.5*few) // the run start's allocations do not grow with the sources
}

// BenchmarkRunStart measures a run start's preparation (deployment,
// dependency check, setup) at 10, 1,000 and 10,000 configured sources:
//
//	go test -run '^$' -bench RunStart -benchmem -count 6 ./api/service/
func BenchmarkRunStart(b *testing.B) {
	for _, n := range []int{10, 1_000, 10_000} {
		b.Run(fmt.Sprintf("sources=%d", n), func(b *testing.B) {
			s := manySources(b, n)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := prepareRun(ctx, s, "d"); err != nil {
					b.Fatalf("prepare run: %v", err)
				}
			}
		})
	}
}
