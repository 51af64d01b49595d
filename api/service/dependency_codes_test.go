package service

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/credentials"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// TestDependencyCodesAreExplained checks that every dependency diagnostic
// code the service raises (itself, or through the sources package or its
// run manager, actors/runs) is in protocol.DependencyCodes, which
// `mcpflow explain` prints, with a meaning and a repair, and that the
// table lists no code they do not raise.
func TestDependencyCodesAreExplained(t *testing.T) {
	is := is.New(t)
	files, err := filepath.Glob("*.go")
	is.NoErr(err)
	for _, dir := range []string{"sources", "runs"} { // the apply's auth findings, the run manager's checks
		moved, err := filepath.Glob(filepath.Join("..", "..", "actors", dir, "*.go"))
		is.NoErr(err)
		is.True(len(moved) > 0) // the package's sources are found
		files = append(files, moved...)
	}
	raised := map[string]bool{credentials.CodeNotFound: true, credentials.CodeNotSupported: true}
	literal := regexp.MustCompile(`(?:[dD]iagError\(|(?:DependencyDiag|[^.A-Za-z]Diagnostic)\{[^}]*Code: |code, hint :?= )"([a-z_]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		is.NoErr(err)
		for _, m := range literal.FindAllSubmatch(src, -1) {
			raised[string(m[1])] = true
		}
	}
	var explained []string
	for _, c := range protocol.DependencyCodes {
		is.True(c.Means != "" && c.Repair != "") // each says what it means and how to repair it
		explained = append(explained, c.Code)
	}
	for code := range raised {
		if !slices.Contains(explained, code) {
			t.Logf("code %s is raised but not explained", code)
		}
		is.True(slices.Contains(explained, code)) // raised, so explained
	}
	for _, code := range explained {
		if !raised[code] {
			t.Logf("code %s is explained but never raised", code)
		}
		is.True(raised[code]) // explained, so raised
	}
}
