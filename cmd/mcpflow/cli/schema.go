package cli

import (
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
	return showing(r, &cobra.Command{
		Use:   "schema",
		Short: "List the server's methods (rpc.discover)",
		Long: `List the methods the server answers, from its OpenRPC document
(rpc.discover): name, summary, and whether it is an mcpflow extension to
the reference contract. With -o json: the whole OpenRPC document, with
the params and result schemas.`,
		Args: cobra.NoArgs,
	}, jsonrpc.MethodDiscover, noParams, func(t *table, doc discovered) {
		t.row("METHOD", "SUMMARY", "EXTENSION")
		for _, m := range doc.Methods {
			ext, _ := m[contract.ExtensionKey].(bool)
			t.row(m.text("name"), m.summary(), ext)
		}
	})
}
