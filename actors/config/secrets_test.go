package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

func TestKeyFileIsResolvedAgainstTheConfigFolder(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpflow.json")
	is.NoErr(os.WriteFile(path, []byte(`{"version":1,"server":{"secrets":{"key_file":"keys/secrets.key"}}}`), 0o600))
	f, err := config.Load(path)
	is.NoErr(err)
	is.Equal(f.KeyFile(), filepath.Join(dir, "keys", "secrets.key")) // relative to the config file
	f, err = config.Parse([]byte(`{"version":1,"server":{"secrets":{"key_file":"/etc/mcpflow/secrets.key"}}}`))
	is.NoErr(err)
	is.Equal(f.KeyFile(), "/etc/mcpflow/secrets.key")
	f, err = config.Parse([]byte(`{"version":1,"server":{}}`))
	is.NoErr(err)
	is.Equal(f.KeyFile(), "") // none named
}

func TestParseRejectsAnEmptyKeyFile(t *testing.T) {
	is := is.New(t)
	_, err := config.Parse([]byte(`{"version":1,"server":{"secrets":{}}}`))
	is.True(err != nil)
	is.Equal(err.Error(), "invalid config: secrets: key_file must be a path (or leave the secrets section out)")
}
