package contract_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/contract"
)

func TestTheManifestListsSeventyMethods(t *testing.T) {
	is := is.New(t)
	c, err := contract.Load() // compiles every method's params and result schemas
	is.NoErr(err)
	methods := c.Methods()
	is.Equal(len(methods), 70+len(c.Extensions())) // the reference's 70 and mcpflow's extensions
	is.Equal(c.Extensions(), []string{
		"workflow.access.whoami", "workflow.admin.connections.login_complete", "workflow.admin.connections.login_start",
		"workflow.admin.connections.refresh_catalog", "workflow.admin.events.subscribe", "workflow.admin.events.unsubscribe",
		"workflow.admin.secrets.rotate",
		"workflow.runs.cancel", "workflow.runs.fork", "workflow.runs.passthrough", "workflow.runs.passthrough_release", "workflow.runs.rerun", "workflow.runs.subscribe", "workflow.runs.unsubscribe",
		"workflow.schedules.create", "workflow.schedules.delete", "workflow.schedules.inspect", "workflow.schedules.list",
		"workflow.schedules.pause", "workflow.schedules.trigger", "workflow.schedules.unpause", "workflow.schedules.update",
		"workflow.sources.complete", "workflow.sources.get_prompt", "workflow.sources.prompts", "workflow.sources.read_resource", "workflow.sources.resources",
		"workflow.webhooks.create", "workflow.webhooks.delete", "workflow.webhooks.inspect", "workflow.webhooks.list",
		"workflow.webhooks.rotate_secret",
	})
	is.Equal(c.Notifications(), []string{"workflow.admin.event", "workflow.admin.lagged", "workflow.runs.event", "workflow.runs.lagged"})
	is.True(slices.IsSorted(methods))
	is.True(c.Has("workflow.runs.start"))
	is.True(c.Has("workflow.admin.source_registry.apply"))
	is.True(!c.Has("workflow.runs.nope"))
	is.Equal(contract.Default().Methods(), methods)
}

// Every method's schemas compile and, for any input, yield either success or a validation error
// naming a path: never a compile error or a panic in the error explainer.
func TestEveryMethodChecksParamsAndResults(t *testing.T) {
	c := contract.Default()
	inputs := []string{``, `{}`, `[]`, `{"unknown_key":1}`, `{"workspace_id":"","revision":0,"limit":0,"deployment_id":5}`}
	for _, method := range c.Methods() {
		t.Run(method, func(t *testing.T) {
			is := is.New(t)
			for _, params := range inputs {
				if err := c.ValidateParams(method, []byte(params)); err != nil {
					_, ok := errors.AsType[*contract.ValidationError](err)
					is.True(ok) // a validation error, not a broken schema
				}
			}
			for _, result := range []any{nil, map[string]any{}, []any{1}, map[string]any{"status": 1}} {
				if err := c.ValidateResult(method, result); err != nil {
					_, ok := errors.AsType[*contract.ValidationError](err)
					is.True(ok)
				}
			}
		})
	}
}

func TestUnknownMethodsAreReportedAsSuch(t *testing.T) {
	is := is.New(t)
	c := contract.Default()
	err := c.ValidateParams("workflow.nope", nil)
	is.True(errors.Is(err, contract.ErrUnknownMethod))
	is.Equal(err.Error(), `contract: unknown method "workflow.nope"`)
	is.True(errors.Is(c.ValidateResult("rpc.discover", map[string]any{}), contract.ErrUnknownMethod))
}

func TestAContractIsSafeForConcurrentUse(t *testing.T) {
	is := is.New(t)
	c, err := contract.Load() // a fresh contract, so the error explainer compiles concurrently
	is.NoErr(err)
	params := []string{
		`{"deployment_id":"d1"}`,
		`{"deployment_id":"d1","trace_range":{"limit":500}}`,
		`{"deployment_id":"d1","trace_range":{"foo":1}}`,
		`{"deployment_id":5}`,
	}
	var wg sync.WaitGroup
	errs := make([]string, 8*len(params))
	for i := range errs {
		wg.Go(func() {
			if err := c.ValidateParams("workflow.runs.start", []byte(params[i%len(params)])); err != nil {
				errs[i] = err.Error()
			}
		})
	}
	wg.Wait()
	for i, got := range errs {
		is.Equal(got, errs[i%len(params)]) // the same params give the same answer
	}
	is.Equal(errs[:len(params)], []string{"", "params.trace_range.limit: must be <= 100", `params.trace_range: unknown key "foo"`, "params.deployment_id: must be string, got integer"})
}

// Params names a method's params in the manifest's order, none for a
// method it does not list.
func TestParamsNamesAMethodsParams(t *testing.T) {
	is := is.New(t)
	c := contract.Default()
	is.Equal(c.Params("workflow.draft_workspaces.set_route"), []string{"workspace_id", "revision", "step_id", "outcome", "target"})
	is.Equal(c.Params("workflow.draft_workspaces.list"), nil) // no params
	is.Equal(c.Params("workflow.runs.nope"), nil)             // not a method
}
