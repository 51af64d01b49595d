package cli

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// newWebhooksCommand holds the commands on signed webhooks.
func newWebhooksCommand(r *remote) *cobra.Command {
	return newGroup("webhooks", "Create, inspect, list, rotate and delete signed webhooks that start runs (POST /hooks/<id>)",
		newWebhooksCreateCommand(r), newWebhooksInspectCommand(r), newWebhooksListCommand(r),
		newWebhooksRotateCommand(r), newWebhooksDeleteCommand(r))
}

var webhookIDParams = idParams(func(id string) any { return p.WebhookIDParams{WebhookID: id} })

// webhookTable shows a webhook, which never holds its secret, and the
// recent deliveries inspect answers with it.
func webhookTable(t *table, h p.Webhook) {
	t.pairs("webhook", h.ID, "deployment", h.DeploymentID, "path", h.Path, "input map", inputMapCell(h.InputMap),
		"created", epochMs(&h.CreatedAtEpochMs), "rotated", epochMs(h.RotatedAtEpochMs),
		"previous secret valid until", epochMs(h.PreviousSecretExpiresAtMs))
	if len(h.RecentDeliveries) == 0 {
		return
	}
	t.line("\nrecent deliveries, newest first:")
	t.row("RECEIVED", "OUTCOME", "STATUS", "DELIVERY ID", "RUN OR REASON")
	for _, d := range h.RecentDeliveries {
		t.row(epochMs(&d.ReceivedAtEpochMs), d.Outcome, d.Status, d.DeliveryID, cmp.Or(d.RunID, d.Reason))
	}
}

// webhookWithSecretTable shows a webhook and the secret answered this once.
func webhookWithSecretTable(t *table, res p.WebhookWithSecret) {
	webhookTable(t, res.Webhook)
	t.pairs("secret", res.Secret)
	t.line("The secret is shown this once: give it to the sender now (docs/triggers.md).")
}

func inputMapCell(m map[string]string) string {
	if len(m) == 0 {
		return "(the whole body)"
	}
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}

func epochMs(ms *int64) any {
	if ms == nil || *ms == 0 {
		return nil
	}
	return time.UnixMilli(*ms).UTC().Format(time.RFC3339)
}

func newWebhooksCreateCommand(r *remote) *cobra.Command {
	var maps []string
	cmd := showing(r, &cobra.Command{
		Use:   "create WEBHOOK_ID DEPLOYMENT_ID",
		Short: "Create a signed webhook that starts a deployment's runs (workflow.webhooks.create)",
		Long: `Create a webhook: a signed POST /hooks/WEBHOOK_ID starts a run of DEPLOYMENT_ID,
its input the JSON body, or the fields --map takes from the body (a JSON
Pointer) and its headers (header:Name). The answer holds the webhook's
secret, shown this once: senders sign with it (X-Mcpflow-Signature, or
GitHub's X-Hub-Signature-256).`,
		Example: `  mcpflow webhooks create deploy-on-push deploy
  mcpflow webhooks create on-push ci --map ref=/ref --map repo=/repository/full_name --map event=header:X-GitHub-Event`,
		Args: cobra.ExactArgs(2),
	}, p.MethodWebhooksCreate, func(_ *cobra.Command, args []string) (any, error) {
		spec := p.WebhookSpec{ID: args[0], DeploymentID: args[1]}
		for _, m := range maps {
			field, src, ok := strings.Cut(m, "=")
			if !ok || field == "" {
				return nil, fmt.Errorf("--map %q: want FIELD=/json/pointer or FIELD=header:Name", m)
			}
			if spec.InputMap == nil {
				spec.InputMap = map[string]string{}
			}
			spec.InputMap[field] = src
		}
		return p.CreateWebhookParams{Webhook: spec}, nil
	}, webhookWithSecretTable)
	cmd.Flags().StringArrayVar(&maps, "map", nil, "an input field and where it comes from: FIELD=/json/pointer or FIELD=header:Name (repeatable)")
	return cmd
}

func newWebhooksInspectCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "inspect WEBHOOK_ID",
		Short:   "Show a webhook, without its secret (workflow.webhooks.inspect)",
		Example: "  mcpflow webhooks inspect deploy-on-push\n  mcpflow webhooks inspect deploy-on-push -o json",
		Args:    cobra.ExactArgs(1),
	}, p.MethodWebhooksInspect, webhookIDParams, webhookTable)
}

func newWebhooksListCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "list",
		Short:   "List webhooks, without their secrets (workflow.webhooks.list)",
		Example: "  mcpflow webhooks list\n  mcpflow webhooks list -o json",
		Args:    cobra.NoArgs,
	}, p.MethodWebhooksList, noParams, func(t *table, res p.ListWebhooksResult) {
		t.row("WEBHOOK", "DEPLOYMENT", "PATH", "INPUT MAP")
		for _, h := range res.Webhooks {
			t.row(h.ID, h.DeploymentID, h.Path, inputMapCell(h.InputMap))
		}
	})
}

func newWebhooksRotateCommand(r *remote) *cobra.Command {
	var grace time.Duration
	cmd := showing(r, &cobra.Command{
		Use:   "rotate-secret WEBHOOK_ID",
		Short: "Give a webhook a new secret; the old one works for a grace period (workflow.webhooks.rotate_secret)",
		Long: `Give a webhook a new secret, shown this once. The previous secret keeps
verifying deliveries for --grace (24h by default; 0 ends it now), so that
the senders can be moved to the new one.`,
		Example: `  mcpflow webhooks rotate-secret deploy-on-push
  mcpflow webhooks rotate-secret deploy-on-push --grace 1h
  mcpflow webhooks rotate-secret deploy-on-push --grace 0`,
		Args: cobra.ExactArgs(1),
	}, p.MethodWebhooksRotateSecret, func(cmd *cobra.Command, args []string) (any, error) {
		params := p.RotateWebhookSecretParams{WebhookID: args[0]}
		if cmd.Flags().Changed("grace") {
			if grace < 0 {
				return nil, fmt.Errorf("--grace must not be negative")
			}
			s := int(grace / time.Second)
			params.GraceSeconds = &s
		}
		return params, nil
	}, webhookWithSecretTable)
	cmd.Flags().DurationVar(&grace, "grace", 24*time.Hour, "how long the previous secret keeps verifying deliveries")
	return cmd
}

func newWebhooksDeleteCommand(r *remote) *cobra.Command {
	return showing(r, &cobra.Command{
		Use:     "delete WEBHOOK_ID",
		Short:   "Delete a webhook; its path answers 404 from then on (workflow.webhooks.delete)",
		Example: "  mcpflow webhooks delete deploy-on-push",
		Args:    cobra.ExactArgs(1),
	}, p.MethodWebhooksDelete, webhookIDParams, func(t *table, res p.DeleteWebhookResult) {
		t.pairs("webhook", res.ID, "deleted", res.Deleted)
	})
}
