package contract_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/contract"
)

func TestTheManifestListsSeventyMethods(t *testing.T) {
	is := is.New(t)
	c, err := contract.Load() // compiles every method's params and result schemas
	is.NoErr(err)
	methods := c.Methods()
	is.Equal(len(methods), 70)
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
