package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/secrets"
	"github.com/mcpflow/mcpflow/actors/store"
)

// EnvSecretsKey is the environment variable that may hold the key that
// seals auth records and the source registry's secrets: the base64 of 32 random bytes.
const EnvSecretsKey = "MCPFLOW_SECRETS_KEY"

// KeyFile is the key file's name under the store root when the config
// names none and $MCPFLOW_SECRETS_KEY is unset.
const KeyFile = "secrets.key"

// storeKeys are the keys that seal a store's auth records, and whether
// opening them created their file.
type storeKeys struct {
	keys    *secrets.Keyring
	created string // the key file made by this start, "" if none
}

// openKeys finds the keys of the store under root: the config's
// server.secrets.key_file; else $MCPFLOW_SECRETS_KEY; else secrets.key
// under root. A key file that is missing is created (mode 0600), except
// for a node of a cluster, whose nodes must all read one key: it needs
// the file, or the variable.
func openKeys(cfg *config.File, root string, getenv func(string) string) (storeKeys, error) {
	cluster := cfg != nil && cfg.Server.Cluster != nil
	path := cfg.KeyFile()
	if path != "" && getenv(EnvSecretsKey) != "" {
		slog.Warn("$"+EnvSecretsKey+" is set but not used: server.secrets.key_file names the key", "key_file", path)
	}
	switch {
	case path == "" && getenv(EnvSecretsKey) != "":
		keys, err := secrets.FromEnv(EnvSecretsKey, getenv(EnvSecretsKey))
		return storeKeys{keys: keys}, err
	case path == "" && cluster:
		return storeKeys{}, fmt.Errorf("a node of a cluster needs the key that seals the auth records, the same on every node: set server.secrets.key_file or $%s", EnvSecretsKey)
	case path == "":
		path = filepath.Join(root, KeyFile)
	case cluster:
		keys, err := secrets.LoadFile(path)
		return storeKeys{keys: keys}, err
	}
	keys, created, err := secrets.LoadOrCreateFile(path)
	if err != nil {
		return storeKeys{}, err
	}
	k := storeKeys{keys: keys}
	if created {
		k.created = path
		slog.Info("created the key that seals the auth records and the source registry's secrets: keep it, and back it up apart from the store", "key_file", path, "key_id", keys.Current())
	}
	return k, nil
}

// forget removes the key file this start created when the store refused
// to open for want of another key (openErr is ErrMissingKey or
// ErrWrongKey): its check rolled back, nothing is sealed under the new
// key, and a start that fails so changes nothing. After any other
// failure the file stays: the store may have sealed records under it
// before it failed.
func (k storeKeys) forget(openErr error) error {
	if k.created == "" || !(errors.Is(openErr, secrets.ErrMissingKey) || errors.Is(openErr, secrets.ErrWrongKey)) {
		return nil
	}
	if err := os.Remove(k.created); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the key file this start created: %w", err)
	}
	return nil
}

// rotator rotates the keys of st: see secrets.Keyring.Rotate.
func rotator(keys *secrets.Keyring, st store.Store) func(ctx context.Context) (secrets.Rotation, error) {
	resealer, ok := st.(store.Resealer)
	if keys == nil || !ok {
		return nil
	}
	return func(ctx context.Context) (secrets.Rotation, error) {
		rot, err := keys.Rotate(ctx, resealer.Reseal)
		if err == nil {
			slog.Info("rotated the key that seals the auth records and the source registry's secrets", "key_id", rot.KeyID, "retired", rot.Retired, "resealed", rot.Resealed)
		}
		return rot, err
	}
}
