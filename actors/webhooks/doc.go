// Package webhooks holds the rules of signed webhooks, apart from HTTP
// and the store: a delivery's signature (mcpflow's timestamped form and
// GitHub's X-Hub-Signature-256) checked against a webhook's secrets, a
// new secret and a rotation's grace, and the map from a delivery's body
// and headers to a workflow's input. docs/triggers.md, "Webhooks".
package webhooks
