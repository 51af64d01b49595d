package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpflow/mcpflow/actors/credentials"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

func newAuthCommand(r *remote) *cobra.Command {
	return newGroup("auth", "List, inspect, save and delete auth records (the credentials sources use)",
		newAuthListCommand(r), newAuthInspectCommand(r), newAuthSaveCommand(r), newAuthDeleteCommand(r))
}

// authRecordTable shows an auth record: its payload's keys, never values.
func authRecordTable(t *table, a p.AuthRecordSummary) {
	t.pairs("auth record", a.ID, "scheme", a.Scheme, "payload keys", a.PayloadKeys, "metadata", a.Metadata)
}

var authRefParams = idParams(func(ref string) any { return p.AuthRefParams{AuthRef: ref} })

func newAuthListCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "list",
		Short:   "List auth records, without their secret values (workflow.admin.auth.list)",
		Example: "  mcpflow auth list\n  mcpflow auth list -o json",
		Args:    cobra.NoArgs,
	}, p.MethodAuthList, noParams, func(t *table, res p.ListAuthRecordsResult) {
		t.row("AUTH RECORD", "SCHEME", "PAYLOAD KEYS", "METADATA")
		for _, a := range res.AuthRecords {
			t.row(a.ID, a.Scheme, a.PayloadKeys, a.Metadata)
		}
	})
}

func newAuthInspectCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "inspect AUTH_REF",
		Short:   "Show an auth record, without its secret values (workflow.admin.auth.inspect)",
		Example: "  mcpflow auth inspect github",
		Args:    cobra.ExactArgs(1),
	}, p.MethodAuthInspect, authRefParams, authRecordTable)
}

func newAuthDeleteCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "delete AUTH_REF",
		Short:   "Delete an auth record (workflow.admin.auth.delete)",
		Example: "  mcpflow auth delete github",
		Args:    cobra.ExactArgs(1),
	}, p.MethodAuthDelete, authRefParams, func(t *table, res p.DeleteAuthRecordResult) {
		t.pairs("auth record", res.ID, "deleted", res.Deleted)
	})
}

// authSave are the flags of `auth save`. No flag holds a secret: secret
// values come from a file or stdin, so they are never in argv (where
// other users and shell history see them).
type authSave struct {
	scheme, payloadFile, tokenFile, metadata string
}

func newAuthSaveCommand(r *remote) *cobra.Command {
	var f authSave
	cmd := showing(r, &cobra.Command{
		Use:   "save AUTH_REF --scheme SCHEME (--payload-file FILE|- | --token-file FILE|-)",
		Short: "Save an auth record; its secret values are read from a file or stdin (workflow.admin.auth.save)",
		Long: `Save an auth record: the credentials a source names by its auth_ref. The
secret values are never given as arguments: --payload-file reads the
payload (a JSON object) from a file, or - for stdin; --token-file reads
one bearer token (its whole content, without the final newline).

Payloads by scheme: bearer {"token": …}; headers {"headers": {NAME: VALUE}};
env {"env": {NAME: VALUE}} (stdio sources); oauth_refresh_token
{"refresh_token": …, "token_url": …, "client_id": …}.
The server answers with the payload's keys, never its values.`,
		Example: `  printf %s "$GITHUB_TOKEN" | mcpflow auth save github --scheme bearer --token-file -
  mcpflow auth save jira --scheme headers --payload-file jira-headers.json
  mcpflow registry update jira.default - <<<'{"auth_ref":"jira"}'`,
		Args: cobra.ExactArgs(1),
	}, p.MethodAuthSave, func(cmd *cobra.Command, args []string) (any, error) {
		return f.params(args[0], cmd.InOrStdin())
	}, authRecordTable)
	fl := cmd.Flags()
	fl.StringVar(&f.scheme, "scheme", "", "bearer, headers, env or oauth_refresh_token (required)")
	fl.StringVar(&f.payloadFile, "payload-file", "", "read the payload, a JSON object, from this file (- for stdin)")
	fl.StringVar(&f.tokenFile, "token-file", "", "bearer: read the token from this file (- for stdin)")
	fl.StringVar(&f.metadata, "metadata", "", "metadata, not secret: a JSON object, @FILE")
	_ = cmd.RegisterFlagCompletionFunc("scheme", fixedCompletion(credentials.SchemeBearer, credentials.SchemeHeaders,
		credentials.SchemeEnv, credentials.SchemeOAuthRefreshToken))
	return cmd
}

// params are the params of workflow.admin.auth.save, the payload read
// from the file or stdin the flags name.
func (f *authSave) params(ref string, stdin io.Reader) (p.SaveAuthParams, error) {
	params := p.SaveAuthParams{AuthRef: ref, Scheme: f.scheme}
	if f.scheme == "" {
		return params, errors.New("--scheme is required")
	}
	switch {
	case f.payloadFile != "" && f.tokenFile != "":
		return params, errors.New("give --payload-file or --token-file, not both")
	case f.payloadFile != "":
		payload, err := objectFileFrom(f.payloadFile, stdin, "payload")
		if err != nil {
			return params, err
		}
		params.Payload = payload
	case f.tokenFile != "":
		if f.scheme != credentials.SchemeBearer {
			return params, fmt.Errorf("--token-file is for the bearer scheme; give --payload-file for %s", f.scheme)
		}
		data, err := readFileOrStdin(f.tokenFile, stdin)
		if err != nil {
			return params, err
		}
		token := strings.TrimRight(string(data), "\r\n")
		if token == "" {
			return params, fmt.Errorf("--token-file %s: the token is empty", f.tokenFile)
		}
		params.Payload = p.Object{"token": token}
	default:
		return params, errors.New("give the secret values with --payload-file FILE|- or --token-file FILE|-, never as arguments")
	}
	if f.metadata != "" {
		meta, err := readJSONArg(f.metadata, stdin)
		if err != nil {
			return params, fmt.Errorf("--metadata: %w", err)
		}
		params.Metadata = meta
	}
	return params, nil
}
