package protocol_test

import (
	"context"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// The API's types are its own: api/protocol depends on no store type, so
// a change to the on-disk format cannot change the public contract. The
// workflow language is still reached for one thing only, the input and
// output binding params of the draft edits (docs/decisions.md says why);
// it must not grow.
func TestProtocolDependsOnNoStoreType(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	is.NoErr(err) // go list answers
	var ours []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/mcpflow/mcpflow/") {
			ours = append(ours, strings.TrimPrefix(p, "github.com/mcpflow/mcpflow/"))
		}
	}
	slices.Sort(ours)
	is.True(!slices.Contains(ours, "actors/store"))                                                      // no store type in the API
	is.Equal(ours, []string{"actors/catalog", "actors/workflow", "actors/workflow/std", "api/protocol"}) // the bindings' language, and nothing else
}

// Only the binding params name the workflow package.
func TestOnlyTheBindingParamsNameTheWorkflowPackage(t *testing.T) {
	is := is.New(t)
	files, err := filepath.Glob("*.go")
	is.NoErr(err)
	var naming []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		is.NoErr(err) // the file parses
		for _, imp := range file.Imports {
			if imp.Path.Value == `"github.com/mcpflow/mcpflow/actors/workflow"` {
				naming = append(naming, f)
			}
		}
	}
	slices.Sort(naming)
	is.Equal(naming, []string{"document_edits.go", "protocol.go", "step_edits.go"}) // set_*_bindings, create_from_capability, add/update steps
}
