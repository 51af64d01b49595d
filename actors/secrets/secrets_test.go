package secrets_test

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/secrets"
)

func TestSealOpensOnlyUnderItsKeyAndForItsRecord(t *testing.T) {
	is := is.New(t)
	k, created, err := secrets.LoadOrCreateFile(filepath.Join(t.TempDir(), "keys", "secrets.key"))
	is.NoErr(err)
	is.True(created)
	sealed, err := k.Seal([]byte("record a"), []byte("hunter2"))
	is.NoErr(err)
	is.True(!strings.Contains(sealed, "hunter2"))
	id, ok := secrets.KeyOf(sealed)
	is.True(ok)
	is.Equal(id, k.Current()) // the key id is kept with the ciphertext
	plain, err := k.Open([]byte("record a"), sealed)
	is.NoErr(err)
	is.Equal(string(plain), "hunter2")

	_, err = k.Open([]byte("record b"), sealed)
	is.True(errors.Is(err, secrets.ErrWrongKey)) // another record's additional data
	tampered := sealed[:len(sealed)-2] + "AA"
	_, err = k.Open([]byte("record a"), tampered)
	is.True(errors.Is(err, secrets.ErrWrongKey)) // a changed ciphertext
	_, err = k.Open([]byte("record a"), "hunter2")
	is.True(errors.Is(err, secrets.ErrNotSealed))
}

func TestAKeyFileIsCreatedOwnerOnlyAndReadBack(t *testing.T) {
	is := is.New(t)
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "secrets.key")
	k, created, err := secrets.LoadOrCreateFile(path)
	is.NoErr(err)
	is.True(created)
	for name, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600} {
		info, err := os.Stat(name)
		is.NoErr(err)
		is.Equal(info.Mode(), want) // owner only
	}
	again, created, err := secrets.LoadOrCreateFile(path)
	is.NoErr(err)
	is.True(!created) // the second start reads it
	is.Equal(again.IDs(), k.IDs())
}

func TestAKeyFileOthersMayReadIsRefused(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "secrets.key")
	_, _, err := secrets.LoadOrCreateFile(path)
	is.NoErr(err)
	is.NoErr(os.Chmod(path, 0o644))
	_, err = secrets.LoadFile(path)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "chmod 600 "+path)) // says how to fix it
}

func TestAKeyFileThatIsNotOneIsRefusedWithoutQuotingIt(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "secrets.key")
	is.NoErr(os.WriteFile(path, []byte(`{"version":1,"current":"a","keys":[{"id":"a","key":"c2VjcmV0"}]}`), 0o600))
	_, err := secrets.LoadFile(path)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "is 6 bytes; a key is 32")) // too short
	is.True(!strings.Contains(err.Error(), "c2VjcmV0"))               // and never quoted
	is.NoErr(os.WriteFile(path, []byte(`{"version":1,"current":"b","keys":[{"id":"a","key":"`+
		base64.StdEncoding.EncodeToString(make([]byte, 32))+`"}]}`), 0o600))
	_, err = secrets.LoadFile(path)
	is.True(strings.Contains(err.Error(), `the current key "b" is not one of its keys`))
}

func TestAKeyFromTheEnvironment(t *testing.T) {
	is := is.New(t)
	raw := make([]byte, 32)
	raw[0] = 7
	value := base64.StdEncoding.EncodeToString(raw)
	k, err := secrets.FromEnv("MCPFLOW_SECRETS_KEY", value)
	is.NoErr(err)
	same, err := secrets.FromEnv("MCPFLOW_SECRETS_KEY", base64.RawURLEncoding.EncodeToString(raw))
	is.NoErr(err)
	is.Equal(same.Current(), k.Current()) // its id is the key's, whatever the encoding
	is.True(strings.HasPrefix(k.Current(), "env-"))
	_, err = k.Rotate(t.Context(), nil)
	is.True(errors.Is(err, secrets.ErrNotRotatable)) // no file to keep a new key in

	_, err = secrets.FromEnv("MCPFLOW_SECRETS_KEY", "c2hvcnQ=")
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "$MCPFLOW_SECRETS_KEY must be the base64 of 32 random bytes"))
}

func TestAFailedResealKeepsTheOlderKeys(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "secrets.key")
	k, _, err := secrets.LoadOrCreateFile(path)
	is.NoErr(err)
	old := k.Current()
	sealed, err := k.Seal(nil, []byte("v"))
	is.NoErr(err)
	_, err = k.Rotate(t.Context(), func(context.Context) (int, error) { return 0, errors.New("store down") })
	is.True(err != nil)
	reread, err := secrets.LoadFile(path)
	is.NoErr(err)
	is.Equal(len(reread.IDs()), 2) // the old key and the new, current one
	is.True(reread.Current() != old)
	plain, err := reread.Open(nil, sealed) // what the old key sealed still opens
	is.NoErr(err)
	is.Equal(string(plain), "v")
}

// Two keyrings on one file, as two nodes of a cluster: after one rotates,
// the other seals under the new key and opens what the new key sealed.
func TestAKeyringFollowsARotationOfItsFile(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "secrets.key")
	a, _, err := secrets.LoadOrCreateFile(path)
	is.NoErr(err)
	b, err := secrets.LoadFile(path)
	is.NoErr(err)
	rot, err := a.Rotate(t.Context(), func(context.Context) (int, error) { return 0, nil })
	is.NoErr(err)

	sealed, err := a.Seal([]byte("r"), []byte("v"))
	is.NoErr(err)
	plain, err := b.Open([]byte("r"), sealed) // a key b did not hold: it reads the file again
	is.NoErr(err)
	is.Equal(string(plain), "v")
	sealed, err = b.Seal([]byte("r"), []byte("w"))
	is.NoErr(err)
	id, _ := secrets.KeyOf(sealed)
	is.Equal(id, rot.KeyID) // b seals under the key the file has as current
}

// A rotation drops the old key from the file; the keyring that rotated
// still opens, in memory, what a read took from the store just before.
func TestARotatedKeyStillOpensInMemoryOnly(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "secrets.key")
	k, _, err := secrets.LoadOrCreateFile(path)
	is.NoErr(err)
	old, err := k.Seal([]byte("r"), []byte("v"))
	is.NoErr(err)
	rot, err := k.Rotate(t.Context(), func(context.Context) (int, error) { return 1, nil })
	is.NoErr(err)
	is.Equal(k.IDs(), []string{rot.KeyID}) // the file's keys
	plain, err := k.Open([]byte("r"), old)
	is.NoErr(err)
	is.Equal(string(plain), "v")
	fresh, err := secrets.LoadFile(path)
	is.NoErr(err)
	_, err = fresh.Open([]byte("r"), old)
	is.True(errors.Is(err, secrets.ErrMissingKey)) // gone from the file
	is.True(strings.Contains(err.Error(), rot.Retired[0]))
}

// TestARotationIsNotUndoneByASealThatReadTheFileBeforeIt: Seal reads the
// key file again, for another node's rotation; a read made just before
// this keyring's own rotation wrote the file must not set the old key
// current again once the rotation has set the new one, or the re-seal
// would keep values under a key the file is about to drop.
func TestARotationIsNotUndoneByASealThatReadTheFileBeforeIt(t *testing.T) {
	is := is.New(t)
	keys, _, err := secrets.LoadOrCreateFile(filepath.Join(t.TempDir(), "secrets.key"))
	is.NoErr(err)
	stop, errs := make(chan struct{}), make(chan error, 4)
	var sealers sync.WaitGroup
	t.Cleanup(func() { close(stop); sealers.Wait() })
	for range 4 {
		sealers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := keys.Seal([]byte("aad"), []byte("value")); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for range 50 {
		var during string
		rot, err := keys.Rotate(t.Context(), func(context.Context) (int, error) {
			during = keys.Current()
			return 0, nil
		})
		is.NoErr(err)
		is.Equal(during, rot.KeyID)               // the re-seal seals under the new key
		is.Equal(keys.IDs(), []string{rot.KeyID}) // and the old one is gone
	}
	select {
	case err := <-errs:
		is.NoErr(err) // every seal succeeded
	default:
	}
}
