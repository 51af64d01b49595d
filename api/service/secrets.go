package service

import (
	"context"

	"github.com/mcpflow/mcpflow/actors/audit"
	"github.com/mcpflow/mcpflow/actors/secrets"
	"github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// secretMethods are workflow.admin.secrets.*: the rotation of the key
// that seals the auth records.
func (s *Service) secretMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		protocol.MethodSecretsRotate: forAdmin(s.rotateSecrets),
	}
}

// rotateSecrets re-seals every auth record under a new key while the
// server serves (workflow.admin.secrets.rotate, an extension): see
// secrets.Keyring.Rotate. The answer names key ids only.
func (s *Service) rotateSecrets(ctx context.Context, _ protocol.Empty) (protocol.RotateSecretsResult, error) {
	if s.RotateKeys == nil {
		return protocol.RotateSecretsResult{}, invalid("this server's store keeps no sealed records: it has no key to rotate")
	}
	rot, err := s.RotateKeys(ctx)
	if err != nil {
		return protocol.RotateSecretsResult{}, upstream("rotate the secrets key: %v", err)
	}
	retired := rot.Retired
	if retired == nil {
		retired = []string{}
	}
	s.record(ctx, audit.Event{Kind: audit.SecretsRotated, Payload: protocol.Object{
		"key_id": rot.KeyID, "retired_key_ids": retired, "resealed": rot.Resealed,
	}})
	return protocol.RotateSecretsResult{KeyID: rot.KeyID, RetiredKeyIDs: retired, Resealed: rot.Resealed}, nil
}

// KeyRotator rotates the key that seals the store's auth records.
type KeyRotator func(ctx context.Context) (secrets.Rotation, error)
