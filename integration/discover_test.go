package integration

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/fakes"
)

// discovery is the part of the OpenRPC document these tests read.
type discovery struct {
	OpenRPC string `json:"openrpc"`
	Methods []struct {
		Name      string           `json:"name"`
		Params    []map[string]any `json:"params"`
		Result    map[string]any   `json:"result"`
		Extension bool             `json:"x-mcpflow-extension"`
	} `json:"methods"`
	Components map[string]any `json:"components"`
}

func discover(t *testing.T) discovery {
	t.Helper()
	is := is.New(t)
	svc := startService(t, session.Factories{config.TransportStdio: fakes.NewInMemory(nil)}, stdioSource("fixture.default", "in-memory"))
	var doc discovery
	is.NoErr(svc.dial(t).Call(testContext(t), jsonrpc.MethodDiscover, nil, &doc))
	return doc
}

// TestDiscoveryDescribesEveryMethodServed checks rpc.discover against the
// contract: every method the contract lists is served and described with
// its params and result schema, and the extensions are marked.
func TestDiscoveryDescribesEveryMethodServed(t *testing.T) {
	is := is.New(t)
	doc := discover(t)
	is.Equal(doc.OpenRPC, contract.OpenRPCVersion)
	var names, extensions []string
	for _, m := range doc.Methods {
		names = append(names, m.Name)
		is.True(m.Result["schema"] != nil) // a result schema
		if m.Extension {
			extensions = append(extensions, m.Name)
		}
	}
	served, listed := len(names), contract.Default().Methods()
	missing := slices.DeleteFunc(slices.Clone(listed), func(m string) bool { return slices.Contains(names, m) })
	t.Logf("rpc.discover: %d methods served of %d in the contract; not served: %v", served, len(listed), missing)
	is.Equal(missing, []string{})                         // every method of the contract is served
	is.Equal(extensions, contract.Default().Extensions()) // the extensions are marked
	is.True(doc.Components["schemas"] != nil)             // with the shared schemas
	for _, name := range names {
		is.True(contract.Default().Has(name)) // nothing is served that the contract does not describe
	}
}

// readmeMethod matches one method line of the README's method list:
// "- `workflow.x.y`", with " (extension)" after an extension.
var readmeMethod = regexp.MustCompile("(?m)^- `(workflow\\.[a-z_.]+)`( \\(extension\\))?")

// TestTheReadmeListsTheMethodsServed keeps the README's method list equal
// to what rpc.discover says is served.
func TestTheReadmeListsTheMethodsServed(t *testing.T) {
	is := is.New(t)
	doc := discover(t)
	readme, err := os.ReadFile("../README.md")
	is.NoErr(err)
	var listed, marked []string
	for _, m := range readmeMethod.FindAllStringSubmatch(string(readme), -1) {
		listed = append(listed, m[1])
		if m[2] != "" {
			marked = append(marked, m[1])
		}
	}
	var served, extensions []string
	for _, m := range doc.Methods {
		served = append(served, m.Name)
		if m.Extension {
			extensions = append(extensions, m.Name)
		}
	}
	if !slices.Equal(listed, served) {
		t.Logf("README lists %v\nrpc.discover serves %v", listed, served)
	}
	is.Equal(listed, served)     // the README lists exactly the methods served, in order
	is.Equal(marked, extensions) // and marks the extensions
}
