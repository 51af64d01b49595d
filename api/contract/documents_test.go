package contract

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// docDrafts are the whole drafts among docs/language.md's JSON examples.
func docDrafts(t *testing.T) []map[string]any {
	t.Helper()
	is := is.New(t)
	data, err := os.ReadFile("../../docs/language.md")
	is.NoErr(err)
	var drafts []map[string]any
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllSubmatch(data, -1) {
		var doc map[string]any
		if json.Unmarshal(m[1], &doc) == nil && doc["steps"] != nil {
			drafts = append(drafts, doc)
		}
	}
	is.True(len(drafts) >= 5) // the language guide's drafts are found
	return drafts
}

// TestDocumentSchemasAcceptTheDocumentsMcpflowReads checks the draft and
// plan schemas against the language guide's drafts and the plans they
// compile to, and the deployment schema against a deployment.
func TestDocumentSchemasAcceptTheDocumentsMcpflowReads(t *testing.T) {
	is := is.New(t)
	c := Default()
	for _, doc := range docDrafts(t) {
		is.NoErr(c.ValidateDocument(DocumentDraft, doc)) // a draft of the guide fits the draft schema
		d, diags := workflow.ParseDraft(doc)
		is.Equal(len(diags), 0)
		plan, err := workflow.Compile(d)
		is.NoErr(err)
		data, err := json.Marshal(plan)
		is.NoErr(err)
		var raw map[string]any
		is.NoErr(json.Unmarshal(data, &raw))
		is.NoErr(c.ValidateDocument(DocumentPlan, raw)) // and the plan it compiles to, the plan schema
	}
	is.NoErr(c.ValidateDocument(DocumentDeployment, map[string]any{"id": "a.default", "artifact_id": "a", "artifact_version": 1.0,
		"bindings": []any{map[string]any{"logical_source": "demo.default", "concrete_source": "demo.default"}}, "drift_policy": "block"}))
}

// TestDocumentSchemasRefuseWhatMcpflowRefuses checks that the schemas
// refuse documents the server would: a step of two kinds, an unknown
// key, a plan node of an unknown type.
func TestDocumentSchemasRefuseWhatMcpflowRefuses(t *testing.T) {
	is := is.New(t)
	c := Default()
	bad := map[string]map[string]any{
		DocumentDraft: {"name": "x", "start": "a", "steps": map[string]any{"a": map[string]any{"join": map[string]any{}, "end": map[string]any{}}}},
		DocumentPlan: {"name": "x", "start": "a", "input_schema": nil, "state_schema": nil, "output_schema": nil,
			"nodes": []any{map[string]any{"id": "a", "type": "teleport"}}, "edges": []any{}},
		DocumentDeployment: {"id": "a", "artifact_id": "a", "artifact_version": 1.0, "bindings": []any{}},
	}
	for name, doc := range bad {
		is.True(c.ValidateDocument(name, doc) != nil) // refused
	}
	is.True(c.ValidateDocument(DocumentDraft, map[string]any{"name": "x", "start": "a", "steps": map[string]any{}, "colour": "red"}) != nil)
	_, err := c.DocumentSchema("nothing")
	is.True(err != nil) // an unknown document
}

// TestDocumentSchemasAreSelfContained checks that each schema carries
// the components it refers to.
func TestDocumentSchemasAreSelfContained(t *testing.T) {
	is := is.New(t)
	for _, name := range Documents {
		s, err := Default().DocumentSchema(name)
		is.NoErr(err)
		is.Equal(s["$schema"], schemaDialect)
		defs, _ := s["$defs"].(map[string]any)
		data, err := json.Marshal(s)
		is.NoErr(err)
		for _, m := range regexp.MustCompile(`"\$ref":"#/\$defs/([A-Za-z]+)"`).FindAllSubmatch(data, -1) {
			_, ok := defs[string(m[1])]
			is.True(ok) // every reference resolves inside the schema
		}
	}
}
