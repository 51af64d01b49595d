package app

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/secrets"
)

// noEnv is an environment without variables.
func noEnv(string) string { return "" }

func TestTheKeyIsCreatedBesideTheStoreByDefault(t *testing.T) {
	is := is.New(t)
	root := t.TempDir()
	k, err := openKeys(&config.File{Version: 1}, root, noEnv)
	is.NoErr(err)
	is.Equal(k.created, filepath.Join(root, KeyFile)) // made by this start
	is.Equal(k.keys.Path(), filepath.Join(root, KeyFile))
	is.NoErr(k.forget(errors.New("disk full"))) // the store may have sealed under it
	_, err = os.Stat(filepath.Join(root, KeyFile))
	is.NoErr(err)                                                                         // kept
	is.NoErr(k.forget(fmt.Errorf("auth record %q: %w", "github", secrets.ErrMissingKey))) // the store needs another key
	_, err = os.Stat(filepath.Join(root, KeyFile))
	is.True(errors.Is(err, fs.ErrNotExist)) // a start that fails so removes it
}

func TestTheKeyComesFromTheConfigThenTheEnvironment(t *testing.T) {
	is := is.New(t)
	root := t.TempDir()
	value := base64.StdEncoding.EncodeToString(make([]byte, 32))
	env := func(name string) string {
		if name == EnvSecretsKey {
			return value
		}
		return ""
	}
	k, err := openKeys(&config.File{Version: 1}, root, env)
	is.NoErr(err)
	is.Equal(k.keys.Path(), "") // from the variable
	is.True(strings.HasPrefix(k.keys.Current(), "env-"))

	named := filepath.Join(t.TempDir(), "mcpflow.key")
	k, err = openKeys(&config.File{Version: 1, Server: config.Server{Secrets: &config.Secrets{KeyFile: named}}}, root, env)
	is.NoErr(err)
	is.Equal(k.keys.Path(), named) // the config's file wins
}

func TestANodeOfAClusterNeedsItsKeyNamed(t *testing.T) {
	is := is.New(t)
	cluster := &config.Cluster{NodeID: "a", Listen: "127.0.0.1:7000"}
	_, err := openKeys(&config.File{Version: 1, Server: config.Server{Cluster: cluster}}, t.TempDir(), noEnv)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "set server.secrets.key_file or $"+EnvSecretsKey)) // no key of its own

	missing := filepath.Join(t.TempDir(), "secrets.key")
	_, err = openKeys(&config.File{Version: 1, Server: config.Server{Cluster: cluster, Secrets: &config.Secrets{KeyFile: missing}}}, t.TempDir(), noEnv)
	is.True(errors.Is(err, fs.ErrNotExist)) // the shared file must exist: a node makes none
	_, err = os.Stat(missing)
	is.True(errors.Is(err, fs.ErrNotExist))
}
