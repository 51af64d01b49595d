package cli

import (
	"strings"

	"github.com/spf13/cobra"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// newSecretsCommand holds the commands on the key that seals the auth
// records.
func newSecretsCommand(r *remote) *cobra.Command {
	return newGroup("secrets", "Work with the key that seals the auth records and the source registry's secrets at rest", newSecretsRotateCommand(r))
}

// newSecretsRotateCommand is `mcpflow secrets rotate`.
func newSecretsRotateCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:   "rotate",
		Short: "Re-seal every auth record under a new key, online (workflow.admin.secrets.rotate)",
		Long: `Ask the running server to seal every auth record under a new key. The server
adds a new key to its key file as the current one, re-seals every record
under it in one transaction, and then leaves only the new key in the file:
the old key is no longer needed. Runs and sessions go on meanwhile.

Database backups taken before the rotation need the old key: keep a copy of
the key file as it was with them (docs/operations.md). A server whose key
comes from $MCPFLOW_SECRETS_KEY has no file to rotate.`,
		Example: `  mcpflow secrets rotate
  mcpflow secrets rotate --url ws://10.0.0.5:8765/ws -o json`,
		Args: cobra.NoArgs,
	}, p.MethodSecretsRotate, noParams, func(t *table, res p.RotateSecretsResult) {
		retired := strings.Join(res.RetiredKeyIDs, ", ")
		if retired == "" {
			retired = "none"
		}
		t.pairs("key", res.KeyID, "retired keys", retired, "records re-sealed", res.Resealed)
	})
}
