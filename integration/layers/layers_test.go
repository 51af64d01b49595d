package layers

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
)

const module = "github.com/mcpflow/mcpflow"

// graph is the module's import graph: each package of the module and
// what it imports (test imports included when asked), the standard
// library and other modules left out.
type graph map[string][]string

// loadGraph lists the module's packages with go list.
func loadGraph(t *testing.T, withTests bool) graph {
	t.Helper()
	is := is.New(t)
	format := `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`
	if withTests {
		format += `{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}`
	}
	out, err := exec.Command("go", "list", "-f", format, module+"/...").Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Logf("go list: %s", ee.Stderr)
	}
	is.NoErr(err) // go list reads the module
	g := graph{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		var own []string
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module+"/") && imp != fields[0] && !slices.Contains(own, imp) {
				own = append(own, imp)
			}
		}
		g[fields[0]] = own
	}
	is.NoErr(sc.Err())
	is.True(len(g) > 10) // the module's packages were listed
	return g
}

// reaches returns, for each package from reaches (directly or not) whose
// path breaks, the chain of imports that leads there.
func (g graph) reaches(from string, breaks func(string) bool) [][]string {
	var found [][]string
	seen := map[string]bool{from: true}
	queue := [][]string{{from}}
	for len(queue) > 0 {
		chain := queue[0]
		queue = queue[1:]
		for _, imp := range g[chain[len(chain)-1]] {
			if seen[imp] {
				continue
			}
			seen[imp] = true
			next := append(slices.Clone(chain), imp)
			if breaks(imp) {
				found = append(found, next)
				continue
			}
			queue = append(queue, next)
		}
	}
	return found
}

// under reports whether pkg is dir of the module or below it.
func under(pkg, dir string) bool {
	p := module + "/" + dir
	return pkg == p || strings.HasPrefix(pkg, p+"/")
}

// TestNothingUnderActorsImportsAPI: the domain packages, their tests
// included, reach nothing under api/, not even through another package.
func TestNothingUnderActorsImportsAPI(t *testing.T) {
	is := is.New(t)
	g := loadGraph(t, true)
	actors := 0
	var broken []string
	for pkg := range g {
		if !under(pkg, "actors") {
			continue
		}
		actors++
		for _, chain := range g.reaches(pkg, func(p string) bool { return under(p, "api") }) {
			if under(chain[1], "actors") {
				continue // through another actors/ package, which is reported itself
			}
			broken = append(broken, strings.Join(chain, " -> "))
		}
	}
	is.True(actors > 10)  // the actors/ packages were checked
	is.Equal(broken, nil) // no import chain from actors/ into api/
}

// edgeMayImport are the api/ packages the edge may use: access control,
// the JSON-RPC framing, the contract and the method table's shape. Any
// other one (api/service, api/mcpface, api/console, api/protocol, a
// handler package still to come) is a handler's, and out of its reach.
var edgeMayImport = []string{"api/access", "api/contract", "api/jsonrpc", "api/rpc"}

// TestTheEdgeImportsNoHandlerPackage: api/edge, built as it ships, reaches
// no api/ package but those of edgeMayImport, so it can know no method by
// name.
func TestTheEdgeImportsNoHandlerPackage(t *testing.T) {
	is := is.New(t)
	g := loadGraph(t, false)
	edge := module + "/api/edge"
	_, ok := g[edge]
	is.True(ok) // the edge was listed
	forbidden := func(p string) bool {
		return under(p, "api") && !slices.ContainsFunc(edgeMayImport, func(dir string) bool { return under(p, dir) })
	}
	var broken []string
	for _, chain := range g.reaches(edge, forbidden) {
		broken = append(broken, strings.Join(chain, " -> "))
	}
	is.Equal(broken, nil)                                                                     // no import chain from the edge into a handler package
	is.True(len(g.reaches(edge, func(p string) bool { return p == module+"/api/rpc" })) == 1) // the check sees the edge's imports
}
