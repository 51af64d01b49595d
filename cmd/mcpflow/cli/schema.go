package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

// discovered is the part of the rpc.discover document the table shows.
type discovered struct {
	Methods []discoveredMethod `json:"methods"`
}

// discoveredMethod is one method of the OpenRPC document, with the
// extension mark under contract.ExtensionKey.
type discoveredMethod map[string]any

func (m discoveredMethod) text(key string) string {
	s, _ := m[key].(string)
	return s
}

// summary is the first sentence of the method's description, else its
// params and result: "run_id → RunResult".
func (m discoveredMethod) summary() string {
	if d := m.text("description"); d != "" {
		// The EXTENSION column says what this prefix does.
		for _, prefix := range []string{"mcpflow extension: ", "mcpflow extension, "} {
			d = strings.TrimPrefix(d, prefix)
		}
		first, _, _ := strings.Cut(d, ". ")
		return clip(strings.TrimSuffix(first, "."), 90)
	}
	var names []string
	params, _ := m["params"].([]any)
	for _, param := range params {
		if obj, ok := param.(map[string]any); ok {
			name, _ := obj["name"].(string)
			if required, _ := obj["required"].(bool); !required {
				name += "?"
			}
			names = append(names, name)
		}
	}
	result := ""
	if r, ok := m["result"].(map[string]any); ok {
		if schema, ok := r["schema"].(map[string]any); ok {
			ref, _ := schema["$ref"].(string)
			result = ref[strings.LastIndex(ref, "/")+1:]
		}
	}
	return clip("("+strings.Join(names, ", ")+") → "+firstSet(result, "result"), 90)
}

func newSchemaCommand(r *remote) *cobra.Command {
	cmd := newGroup("schema", "Show the server's methods, or the JSON Schema of a workflow document", newSchemaMethodsCommand(r))
	for _, name := range contract.Documents {
		cmd.AddCommand(newDocumentSchemaCommand(name))
	}
	return cmd
}

// documentHelp says what each document is, for its schema command.
var documentHelp = map[string]string{
	contract.DocumentDraft:      "a draft: the authoring document (steps and routes) a draft workspace holds",
	contract.DocumentPlan:       "a plan: the compiled workflow an artifact holds ('mcpflow artifacts create-from-plan' takes one)",
	contract.DocumentDeployment: "a deployment: an artifact version bound to sources ('mcpflow deploy FILE' takes one)",
}

// newDocumentSchemaCommand prints the JSON Schema of one workflow
// document. It needs no server: the schema is the binary's contract.
func newDocumentSchemaCommand(name string) *cobra.Command {
	return &cobra.Command{
		Use:   name,
		Short: "Print the JSON Schema of " + documentHelp[name],
		Long: "Print the JSON Schema (draft 2020-12) of " + documentHelp[name] + `.
The schema is self-contained: the parts it refers to are under its $defs.
It is JSON for both -o table and -o json.`,
		Example: fmt.Sprintf("  mcpflow schema %s > %s.schema.json\n  mcpflow schema %s | jq '.properties | keys'", name, name, name),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := contract.Default().DocumentSchema(name)
			if err != nil {
				return err
			}
			return printJSON(cmd.OutOrStdout(), s)
		},
	}
}

func newSchemaMethodsCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:   "methods",
		Short: "List the server's methods (rpc.discover)",
		Long: `List the methods the server answers, from its OpenRPC document
(rpc.discover): name, summary, and whether it is an mcpflow extension to
the reference contract. With -o json: the whole OpenRPC document, with
the params and result schemas.`,
		Example: "  mcpflow schema methods\n  mcpflow schema methods -o json | jq '.methods[].name'",
		Args:    cobra.NoArgs,
	}, jsonrpc.MethodDiscover, noParams, func(t *table, doc discovered) {
		t.row("METHOD", "SUMMARY", "EXTENSION")
		for _, m := range doc.Methods {
			ext, _ := m[contract.ExtensionKey].(bool)
			t.row(m.text("name"), m.summary(), ext)
		}
	})
}
