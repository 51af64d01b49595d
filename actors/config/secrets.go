package config

import (
	"errors"
	"path/filepath"
)

// Secrets says where the key that seals auth records at rest is kept
// (docs/operations.md, "The secrets key").
type Secrets struct {
	// KeyFile is the key file (a relative path starts at the config
	// file's folder). Absent, the key comes from $MCPFLOW_SECRETS_KEY, or
	// else from secrets.key under the store root, created on first start.
	KeyFile string `json:"key_file,omitempty"`
}

// Validate checks a secrets section; nil is valid.
func (s *Secrets) Validate() error {
	if s != nil && s.KeyFile == "" {
		return errors.New("secrets: key_file must be a path (or leave the secrets section out)")
	}
	return nil
}

// KeyFile is the configured key file, a relative one resolved against the
// config file's folder (Dir); "" when the config names none.
func (f *File) KeyFile() string {
	if f == nil || f.Server.Secrets == nil {
		return ""
	}
	path := f.Server.Secrets.KeyFile
	if filepath.IsAbs(path) || f.dir == "" {
		return path
	}
	return filepath.Join(f.dir, path)
}
