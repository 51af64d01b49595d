package main

import (
	"os"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/contract"
)

// generatedFile is the committed client, relative to this package.
const generatedFile = "../web/src/api/generated.ts"

// TestGeneratedClientIsFresh fails when the committed TypeScript client
// is not what the manifest generates: run `go generate ./api/console`.
func TestGeneratedClientIsFresh(t *testing.T) {
	is := is.New(t)
	want, err := render(contract.Manifest())
	is.NoErr(err)
	got, err := os.ReadFile(generatedFile)
	is.NoErr(err)
	if string(got) != string(want) {
		t.Fatalf("%s is stale: run go generate ./api/console", generatedFile)
	}
}

// TestEveryMethodHasAClientFunction checks the client against the
// contract's own method list.
func TestEveryMethodHasAClientFunction(t *testing.T) {
	is := is.New(t)
	out, err := render(contract.Manifest())
	is.NoErr(err)
	for _, m := range contract.Default().Methods() {
		is.True(strings.Contains(string(out), "return this.call(\""+m+"\", params);")) // a client function per method
	}
}

func TestTypeOfSchemas(t *testing.T) {
	is := is.New(t)
	is.Equal(tsType(map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "null"}}}, ""), "string | null")
	is.Equal(tsType(map[string]any{"enum": []any{"a", "b"}}, ""), `"a" | "b"`)
	is.Equal(tsType(map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/X"}}, ""), "X[]")
	is.Equal(tsType(map[string]any{"type": "object", "additionalProperties": true}, ""), "{ [key: string]: Json }")
	is.Equal(tsType(map[string]any{"type": "object", "required": []any{"a"}, "properties": map[string]any{"a": map[string]any{"type": "integer"}, "b-c": map[string]any{"type": "boolean"}}, "additionalProperties": false}, ""),
		"{\n  a: number;\n  \"b-c\"?: boolean;\n}")
	is.Equal(camel("workflow.draft_workspaces.create_from_capability"), "draftWorkspacesCreateFromCapability")
}
