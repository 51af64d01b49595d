package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/actors/config"
)

// NewConfigImportCommand is `mcpflow config import FILE [-o OUT]`: it
// converts a Claude Desktop, Cursor or VS Code MCP file into mcpflow's
// config, printed or written to OUT, and says on stderr what it mapped and
// skipped.
func NewConfigImportCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Convert a Claude Desktop, Cursor or VS Code MCP file into an mcpflow config",
		Long: `Convert the MCP servers of a Claude Desktop or Cursor file ({"mcpServers": …},
also Claude Code's .mcp.json) or of a VS Code file ({"servers": …}, or the
"mcp" section of settings.json) into mcpflow's config. Each server NAME
becomes the connection NAME.default (characters outside [A-Za-z0-9_-]
become _), over stdio or HTTP, with its env and headers.

Editor variables become ${VAR} references that mcpflow expands from its
environment when it loads the config: ${env:NAME} is ${NAME}, ${userHome}
is ${HOME}, and a VS Code ${input:ID} is ${ID in upper snake case}, which
you set rather than being prompted for. Values are copied as written: a
literal secret in FILE is in the output too (write it with -o, mode 0600,
or replace it with a ${VAR}).

The config is printed on stdout, or written to OUT with -o; what was
renamed, skipped or needs a variable is said on stderr. 'mcpflow serve
--config FILE' reads such a file directly, converted the same way.`,
		Example: `  mcpflow config import ~/.cursor/mcp.json -o mcpflow.json
  mcpflow config import .vscode/mcp.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return importConfig(args[0], out, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "write the config to this file (mode 0600) instead of printing it")
	_ = cmd.MarkFlagFilename("out", "json")
	return cmd
}

// importConfig converts the file at in and prints it to stdout or writes
// it to out, reporting on stderr.
func importConfig(in, out string, stdout, stderr io.Writer) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("read %s: %w", in, err)
	}
	f, err := config.Import(data)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	doc, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode config: %w", err)
	}
	doc = append(doc, '\n')
	// Checked as serve will load it, in this environment.
	var unsetVars []string
	if _, err := config.Parse(doc); err != nil {
		unset, ok := errors.AsType[*config.UnsetVariablesError](err)
		if !ok {
			return fmt.Errorf("%s: the converted config is not valid: %w", in, err)
		}
		unsetVars = unset.Names
	}
	if out != "" {
		if err := writeConfigFile(in, out, doc); err != nil {
			return err
		}
	} else if _, err := stdout.Write(doc); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	reportImport(stderr, in, out, f.Imported(), unsetVars)
	if n := literalValues(f); n > 0 && out == "" {
		fmt.Fprintf(stderr, "note: %d env or header value(s) printed as %s has them; keep the output private (-o writes mode 0600) or replace them with ${VAR}\n", n, in)
	}
	return nil
}

// literalValues counts the env and header values of f that are not ${VAR}
// references: secrets, often.
func literalValues(f *config.File) int {
	n := 0
	for _, c := range f.Server.Sources {
		for _, m := range []map[string]string{c.Transport.Env, c.Transport.Headers} {
			for _, v := range m {
				if !strings.Contains(v, "${") {
					n++
				}
			}
		}
	}
	return n
}

// reportImport says what the conversion did: names, ids and fields, never
// values.
func reportImport(w io.Writer, in, out string, r *config.ImportReport, unsetVars []string) {
	format := "Claude Desktop / Cursor (mcpServers)"
	if r.Format == config.FormatVSCode {
		format = "VS Code (servers)"
	}
	fmt.Fprintf(w, "imported %d server(s) from %s, a %s file:\n", len(r.Servers), in, format)
	t := newTable(w)
	t.row("SERVER", "CONNECTION", "TRANSPORT", "ENABLED")
	for _, s := range r.Servers {
		t.row(s.Name, s.ID, s.Transport, s.Enabled)
	}
	_ = t.flush()
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	if len(unsetVars) > 0 {
		fmt.Fprintf(w, "note: set %s in mcpflow's environment before serving this config\n", strings.Join(unsetVars, ", "))
	}
	if out != "" {
		fmt.Fprintf(w, "wrote %s; serve it with: mcpflow serve --config %s\n", out, out)
	}
}

// writeConfigFile writes doc to out with mode 0600, replacing it whole,
// and refuses to overwrite the file it was converted from.
func writeConfigFile(in, out string, doc []byte) error {
	if a, err := os.Stat(in); err == nil {
		if b, err := os.Stat(out); err == nil && os.SameFile(a, b) {
			return fmt.Errorf("-o %s is the file being imported; write the config elsewhere", out)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".mcpflow-config-*") // mode 0600
	if err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename, nothing is there
	if _, err := tmp.Write(doc); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
