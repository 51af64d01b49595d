package postgres_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/store/postgres"
	"github.com/mcpflow/mcpflow/actors/store/postgres/pgtest"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// testCopy copies stores holding every kind of record, a SQLite one and
// an in-memory one that kept only its 3 newest events: each copy reads back
// the same through the store interface, and what it counted is what both
// hold.
func testCopy(t *testing.T, srv *pgtest.Server) {
	for _, tt := range []struct {
		name   string
		open   func(t *testing.T) store.Store
		events int
	}{
		{"sqlite", func(t *testing.T) store.Store {
			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "mcpflow.db"))
			is.New(t).NoErr(err)
			return s
		}, 9},
		{"memory", func(*testing.T) store.Store { return store.NewMemory(store.WithMaxEvents(3)) }, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			ctx := t.Context()
			src := tt.open(t)
			defer src.Close()
			fill(t, src)
			dst := open(t, srv.NewDatabase(t, icu))

			copied, err := dst.CopyFrom(ctx, src)
			is.NoErr(err)
			is.Equal(copied, postgres.Counts{Workspaces: 2, Artifacts: 3, Deployments: 1, Runs: 3, TraceEntries: 3, RunEvents: 7,
				Catalogs: 1, AuthRecords: 1, RegistryEntries: 1, Webhooks: 1, Schedules: 1, Events: tt.events})
			same(t, dst, src)

			seq, err := dst.AppendEvent(ctx, store.Event{Kind: "after_the_copy"})
			is.NoErr(err)
			is.Equal(seq, int64(10)) // the numbering goes on from the source's
			r, err := dst.GetRun(ctx, "run-1")
			is.NoErr(err)
			r.TraceCount++
			r.Status = store.RunCompleted
			is.NoErr(dst.RecordProgress(ctx, r, []workflow.TraceEntry{{NodeID: "more"}}))
			_, last, err := dst.ReadRunEvents(ctx, "run-1", 0, 0)
			is.NoErr(err)
			is.Equal(last, int64(4)) // and so does each run's
		})
	}
}

// testCopyIntoNonEmpty copies into a store that holds a record: it
// refuses, and the store keeps only that record.
func testCopyIntoNonEmpty(t *testing.T, srv *pgtest.Server) {
	is := is.New(t)
	ctx := t.Context()
	src := store.NewMemory()
	fill(t, src)
	dst := open(t, srv.NewDatabase(t))
	is.NoErr(dst.SaveDeployment(ctx, store.Deployment{ID: "mine"}))

	_, err := dst.CopyFrom(ctx, src)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "already holds 1 records")) // says why
	list, err := dst.ListDeployments(ctx)
	is.NoErr(err)
	is.Equal(len(list), 1)
	workspaces, err := dst.ListWorkspaces(ctx)
	is.NoErr(err)
	is.Equal(len(workspaces), 0) // nothing copied
}

// fill stores records of every kind in s: 2 workspaces, 3 artifact
// versions, 1 deployment, 3 runs (3 trace entries and 7 run events: one
// run finished, one running, one created), 1 catalog, 1 auth record, 1
// registry entry and 9 admin events (5 appended, and the runs' 3
// workflow_run_started and 1 workflow_run_completed).
func fill(t *testing.T, s store.Store) {
	t.Helper()
	is := is.New(t)
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 123_456_789, time.UTC)
	for _, id := range []string{"ws-b", "ws-a"} {
		is.NoErr(s.CreateWorkspace(ctx, store.Workspace{ID: id, Revision: 3, Draft: workflow.Object{"name": id}, Status: "valid"}))
	}
	for _, a := range []store.Artifact{
		{ID: "wf", Version: 1, Kind: "workflow", Title: "Fetch", Plan: workflow.Plan{Name: "wf", Start: "fetch"}},
		{ID: "wf", Version: 2, Kind: "workflow", Title: "Fetch again", Plan: workflow.Plan{Name: "wf", Start: "fetch"}},
		{ID: "wrap", Version: 1, Kind: "wrapper", Title: "Wrap", Description: ptr("A wrapper")},
	} {
		_, err := s.SaveArtifact(ctx, a)
		is.NoErr(err)
	}
	dep := store.Deployment{ID: "dep", ArtifactID: "wf", ArtifactVersion: 2, DriftPolicy: "warn",
		Bindings: []store.Binding{{LogicalSource: "web", ConcreteSource: "web.default"}}}
	is.NoErr(s.SaveDeployment(ctx, dep))
	for i, steps := range []int{2, 1, 0} {
		r := store.Run{ID: "run-" + strconv.Itoa(i), DeploymentID: "dep", ArtifactID: "wf", ArtifactVersion: 2,
			Status: store.RunRunning, Input: workflow.Object{"n": float64(i)}, Deployment: dep,
			CreatedAt: t0, UpdatedAt: t0.Add(time.Duration(i))}
		is.NoErr(s.CreateRun(ctx, r, nil))
		for step := range steps {
			r.TraceCount++
			r.UpdatedAt = r.UpdatedAt.Add(time.Second)
			r.State = map[string]any{"step": float64(step)}
			if step == steps-1 && i == 0 {
				r.Status, r.Outcome = store.RunCompleted, ptr(workflow.OutcomeOK)
			}
			is.NoErr(s.RecordProgress(ctx, r, []workflow.TraceEntry{{FrameID: "root", NodeID: "n" + strconv.Itoa(step), Outcome: workflow.OutcomeOK}}))
		}
	}
	is.NoErr(s.SaveCatalog(ctx, catalog.Snapshot{ConnectionID: "web.default", FetchedAtEpochMs: 1_000,
		Tools: []catalog.Tool{{Name: "fetch", InputSchema: catalog.Object{"type": "object"}}}}))
	is.NoErr(s.SaveAuth(ctx, store.AuthRecord{ID: "web", Scheme: "bearer", Payload: map[string]any{"token": "s3cret"}}))
	is.NoErr(s.CreateWebhook(ctx, store.Webhook{ID: "on-push", DeploymentID: "dep", Secrets: []store.WebhookSecret{{Secret: "whsec_x"}}}))
	is.NoErr(s.CreateSchedule(ctx, store.Schedule{ScheduleDef: store.ScheduleDef{ID: "nightly", DeploymentID: "dep",
		Spec: store.ScheduleSpec{Cron: "0 2 * * *"}, Overlap: "skip", CatchupWindowSeconds: 300}, State: store.ScheduleState{Fired: 3, LastRunID: "run-1"}}))
	is.NoErr(s.PutRegistryEntry(ctx, store.RegistryEntry{ID: "web.default", Kind: "mcp", Enabled: true,
		Transport: map[string]any{"kind": "http", "url": "https://mcp.example.com"}}))
	for i := range 5 {
		_, err := s.AppendEvent(ctx, store.Event{Kind: "tool_call_completed", TimestampEpochMs: int64(i), Payload: map[string]any{"i": float64(i)}})
		is.NoErr(err)
	}
}

// same checks that got holds what want holds, kind by kind, read through
// the store interface.
func same(t *testing.T, got, want store.Store) {
	t.Helper()
	ctx := t.Context()
	for _, kind := range []struct {
		name string
		read func(s store.Store) (any, error)
	}{
		{"workspaces", func(s store.Store) (any, error) { return s.ListWorkspaces(ctx) }},
		{"artifacts", func(s store.Store) (any, error) {
			list, _, err := s.ListArtifacts(ctx, store.ArtifactQuery{})
			return list, err
		}},
		{"deployments", func(s store.Store) (any, error) { return s.ListDeployments(ctx) }},
		{"runs", func(s store.Store) (any, error) {
			list, _, err := s.ListRuns(ctx, store.RunQuery{})
			return list, err
		}},
		{"traces", func(s store.Store) (any, error) {
			return perRun(ctx, s, func(id string) (any, error) { return s.ReadTrace(ctx, id, 0, 0) })
		}},
		{"run events", func(s store.Store) (any, error) {
			return perRun(ctx, s, func(id string) (any, error) {
				events, last, err := s.ReadRunEvents(ctx, id, 0, 0)
				return []any{events, last}, err
			})
		}},
		{"catalogs", func(s store.Store) (any, error) { return s.ListCatalogs(ctx) }},
		{"auth records", func(s store.Store) (any, error) { return s.ListAuth(ctx) }},
		{"registry", func(s store.Store) (any, error) { return s.ListRegistryEntries(ctx) }},
		{"webhooks", func(s store.Store) (any, error) { return s.ListWebhooks(ctx) }},
		{"schedules", func(s store.Store) (any, error) { return s.ListSchedules(ctx) }},
		{"events", func(s store.Store) (any, error) {
			list, err := s.ListEvents(ctx, 0, 0)
			if err != nil {
				return nil, err
			}
			last, err := s.LastEventSeq(ctx)
			return []any{list, last}, err
		}},
	} {
		t.Run(kind.name, func(t *testing.T) {
			is := is.New(t)
			g, err := kind.read(got)
			is.NoErr(err)
			w, err := kind.read(want)
			is.NoErr(err)
			is.Equal(g, w) // the copy holds the same records
		})
	}
}

// perRun reads something of each run of s, by run id.
func perRun(ctx context.Context, s store.Store, read func(id string) (any, error)) (map[string]any, error) {
	runs, _, err := s.ListRuns(ctx, store.RunQuery{})
	if err != nil {
		return nil, err
	}
	byRun := map[string]any{}
	for _, r := range runs {
		if byRun[r.ID], err = read(r.ID); err != nil {
			return nil, err
		}
	}
	return byRun, nil
}

func ptr[T any](v T) *T { return &v }
