package authoring_test

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/actors/workflow/authoring"
)

func TestApplyPatchFollowsRFC6902EvenAtTheRoot(t *testing.T) {
	for _, c := range []struct {
		name, patch string
		want        string // the patched document; "" when refused
		code        string // the refusal's diagnostic
	}{
		{name: "an ordinary operation", patch: `[{"op":"replace","path":"/name","value":"b"}]`, want: `{"name":"b","x":{"y":1}}`},
		{name: "replacing the whole document", patch: `[{"op":"replace","path":"","value":{"z":2}}]`, want: `{"z":2}`},
		{name: "moving a member onto the root", patch: `[{"op":"move","from":"/x","path":""}]`, want: `{"y":1}`},
		{name: "in order with the others", patch: `[{"op":"add","path":"/x/k","value":1},{"op":"move","from":"/x","path":""},{"op":"add","path":"/m","value":2}]`,
			want: `{"k":1,"m":2,"y":1}`},
		{name: "copying the whole document as patched so far", patch: `[{"op":"add","path":"/k","value":1},{"op":"copy","from":"","path":"/whole"}]`,
			want: `{"k":1,"name":"a","whole":{"k":1,"name":"a","x":{"y":1}},"x":{"y":1}}`},
		{name: "moving the whole document into itself", patch: `[{"op":"move","from":"","path":"/inner"}]`, code: "patch_invalid"},
		{name: "a negative index", patch: `[{"op":"add","path":"/l","value":[1]},{"op":"remove","path":"/l/-1"}]`, code: "patch_invalid"},
		{name: "a test that fails", patch: `[{"op":"test","path":"/name","value":"other"}]`, code: "patch_invalid"},
		{name: "a root that is no object", patch: `[{"op":"replace","path":"","value":[1]}]`, code: "draft_not_object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			var ops []workflow.Object
			is.NoErr(json.Unmarshal([]byte(c.patch), &ops))
			doc := workflow.Object{"name": "a", "x": map[string]any{"y": 1}}
			before := jsonOf(t, doc)
			patched, refused := authoring.ApplyPatch(doc, ops)
			is.Equal(jsonOf(t, doc), before) // the document given is left alone
			if c.code != "" {
				is.True(refused != nil)
				is.Equal(refused.Code, c.code)
				is.True(patched == nil)
				return
			}
			is.True(refused == nil)
			is.Equal(jsonOf(t, patched), c.want)
		})
	}
}
