package protocol

// MethodSecretsRotate re-seals every auth record under a new key (an
// mcpflow extension).
const MethodSecretsRotate = "workflow.admin.secrets.rotate"

// RotateSecretsResult answers workflow.admin.secrets.rotate: the new key,
// the keys no record needs any more (dropped from the key file), and how
// many auth records were re-sealed. No key is ever answered.
type RotateSecretsResult struct {
	KeyID         string   `json:"key_id"`
	RetiredKeyIDs []string `json:"retired_key_ids"`
	Resealed      int      `json:"resealed"`
}
