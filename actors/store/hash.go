package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// ArtifactHash returns the hex SHA-256 of a's JSON encoding. The encoding is
// canonical (struct fields in declaration order, map keys sorted, raw JSON
// compacted), so two saves of one id+version carry the same content exactly
// when their hashes are equal. Implementations of Store use it to keep
// artifacts immutable.
func ArtifactHash(a Artifact) (string, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
