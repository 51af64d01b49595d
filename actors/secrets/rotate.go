package secrets

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrNotRotatable means the keys do not come from a key file, which Rotate
// needs to keep the new key.
var ErrNotRotatable = errors.New("keys not read from a key file cannot be rotated: set server.secrets.key_file")

// Rotation is what Rotate did.
type Rotation struct {
	// KeyID is the new current key.
	KeyID string `json:"key_id"`
	// Retired are the keys dropped from the key file: no record needs
	// them any more.
	Retired []string `json:"retired_key_ids"`
	// Resealed is how many records reseal sealed under the new key.
	Resealed int `json:"resealed"`
}

// Rotate makes a new key current and, once reseal has sealed every value
// under it, leaves it the only key in the file. Rotations run one at a
// time. In order:
//
//  1. The file is read again (another node may have rotated) and written
//     with a new key added as current: from then on every seal uses it.
//  2. reseal seals every value under it (a store does it in one
//     transaction; it counts the values it changed).
//  3. The file is written with the new key alone.
//
// A failure in 2 or a stop between 1 and 3 leaves a file that holds the
// older keys beside the new one: every value opens, and the next Rotate
// finishes the work. The older keys are gone from the file only once no
// value is sealed under them.
func (k *Keyring) Rotate(ctx context.Context, reseal func(context.Context) (int, error)) (Rotation, error) {
	if k.path == "" {
		return Rotation{}, fmt.Errorf("%s: %w", k.source, ErrNotRotatable)
	}
	k.rotating.Lock()
	defer k.rotating.Unlock()
	if err := k.reload(); err != nil {
		return Rotation{}, err
	}
	ky, err := generateKey(time.Now())
	if err != nil {
		return Rotation{}, err
	}
	k.mu.RLock()
	all := append(slices.Clone(k.keys), ky)
	k.mu.RUnlock()
	if err := writeKeyFile(k.path, fileOf(ky.id, all)); err != nil {
		return Rotation{}, err
	}
	if err := k.set(ky.id, all); err != nil {
		return Rotation{}, err
	}
	n, err := reseal(ctx)
	if err != nil {
		return Rotation{KeyID: ky.id}, fmt.Errorf("re-seal under key %q (%s keeps the older keys too: every record still opens; rotate again): %w",
			ky.id, k.source, err)
	}
	var retired []string
	for _, old := range all[:len(all)-1] {
		retired = append(retired, old.id)
	}
	if err := writeKeyFile(k.path, fileOf(ky.id, []*key{ky})); err != nil {
		return Rotation{KeyID: ky.id, Resealed: n}, err
	}
	if err := k.set(ky.id, []*key{ky}); err != nil {
		return Rotation{KeyID: ky.id, Resealed: n}, err
	}
	return Rotation{KeyID: ky.id, Retired: retired, Resealed: n}, nil
}
