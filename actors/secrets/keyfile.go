package secrets

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// keyFileVersion is the version of the key file format.
const keyFileVersion = 1

// keyFile is the key file: JSON, mode 0600, written whole and renamed into
// place so that a reader never sees half of it.
//
//	{
//	  "version": 1,
//	  "current": "k20261201-3f9a1c2e",
//	  "keys": [
//	    {"id": "k20261201-3f9a1c2e", "key": "<base64 of 32 bytes>", "created_at": "2026-12-01T21:50:00Z"}
//	  ]
//	}
//
// current seals; every key in keys opens what it sealed. A rotation adds a
// key, makes it current, and once every record is sealed under it leaves
// only that key.
type keyFile struct {
	Version int            `json:"version"`
	Current string         `json:"current"`
	Keys    []keyFileEntry `json:"keys"`
}

// keyFileEntry is one key of a key file.
type keyFileEntry struct {
	ID        string `json:"id"`
	Key       string `json:"key"` // base64 (standard alphabet, padded)
	CreatedAt string `json:"created_at"`
}

// keys decodes f's keys; source names the file in errors.
func (f keyFile) keys(source string) (string, []*key, error) {
	if f.Version != keyFileVersion {
		return "", nil, fmt.Errorf("%s: version must be %d, got %d", source, keyFileVersion, f.Version)
	}
	if len(f.Keys) == 0 {
		return "", nil, fmt.Errorf("%s holds no key", source)
	}
	keys := make([]*key, 0, len(f.Keys))
	for _, e := range f.Keys {
		raw, err := base64.StdEncoding.DecodeString(e.Key)
		if err != nil {
			return "", nil, fmt.Errorf("%s: key %q is not base64", source, e.ID)
		}
		ky, err := newKey(e.ID, e.CreatedAt, raw)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", source, err)
		}
		keys = append(keys, ky)
	}
	return f.Current, keys, nil
}

// fileOf is the key file that holds keys with current sealing.
func fileOf(current string, keys []*key) keyFile {
	f := keyFile{Version: keyFileVersion, Current: current}
	for _, ky := range keys {
		f.Keys = append(f.Keys, keyFileEntry{ID: ky.id, Key: base64.StdEncoding.EncodeToString(ky.raw), CreatedAt: ky.created})
	}
	return f
}

// fileSource names a key file in messages.
func fileSource(path string) string { return "key file " + path }

// readKeyFile reads and decodes the key file at path. It refuses one that
// anyone but its owner may read or write.
func readKeyFile(path string) (keyFile, error) {
	var f keyFile
	info, err := os.Stat(path)
	if err != nil {
		return f, fmt.Errorf("read %s: %w", fileSource(path), err)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return f, fmt.Errorf("%s is mode %04o: only its owner may read it (chmod 600 %s)", fileSource(path), perm, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return f, fmt.Errorf("read %s: %w", fileSource(path), err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		// The decoder's message may quote the file: keep its kind only.
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return f, fmt.Errorf("%s is not valid JSON (at byte %d)", fileSource(path), syntax.Offset)
		}
		return f, fmt.Errorf("%s is not a key file (version, current, keys)", fileSource(path))
	}
	return f, nil
}

// writeKeyFile writes f to path, mode 0600, through a file beside it that
// is synced and renamed into place, then syncs the folder.
func writeKeyFile(path string, f keyFile) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", fileSource(path), err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	err = errors.Join(tmp.Chmod(0o600), write(tmp, append(data, '\n')), tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", fileSource(path), err)
	}
	return nil
}

func write(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return err
}

// syncDir syncs the folder dir, so that a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// LoadFile reads the keyring of the key file at path, which must exist.
func LoadFile(path string) (*Keyring, error) {
	f, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	current, keys, err := f.keys(fileSource(path))
	if err != nil {
		return nil, err
	}
	return newKeyring(fileSource(path), path, current, keys)
}

// LoadOrCreateFile reads the key file at path, or creates it (mode 0600,
// its folder 0700) with one new key when there is none; created reports
// which.
func LoadOrCreateFile(path string) (k *Keyring, created bool, err error) {
	k, err = LoadFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("create %s: %w", fileSource(path), err)
	}
	ky, err := generateKey(time.Now())
	if err != nil {
		return nil, false, err
	}
	// O_EXCL: of two processes creating the file at once, one wins and
	// the other reads what it wrote.
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		k, err := LoadFile(path)
		return k, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("create %s: %w", fileSource(path), err)
	}
	data, err := json.MarshalIndent(fileOf(ky.id, []*key{ky}), "", "  ")
	if err == nil {
		err = errors.Join(write(out, append(data, '\n')), out.Sync())
	}
	err = errors.Join(err, out.Close())
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		_ = os.Remove(path)
		return nil, false, fmt.Errorf("create %s: %w", fileSource(path), err)
	}
	k, err = newKeyring(fileSource(path), path, ky.id, []*key{ky})
	return k, err == nil, err
}

// generateKey makes a new random key, with an id that says when.
func generateKey(now time.Time) (*key, error) {
	raw := make([]byte, KeySize)
	suffix := make([]byte, 4)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generate a key: %w", err)
	}
	if _, err := rand.Read(suffix); err != nil {
		return nil, fmt.Errorf("generate a key id: %w", err)
	}
	id := "k" + now.UTC().Format("20060102") + "-" + hex.EncodeToString(suffix)
	return newKey(id, now.UTC().Format(time.RFC3339), raw)
}

// FromEnv is the keyring of one key given in the environment variable
// name as value: base64 (standard or URL alphabet, padded or not) of 32
// bytes. Its id is "env-" and the first 8 hex digits of the key's SHA-256,
// so a record sealed under another value names another id. Such a keyring
// cannot be rotated: Rotate needs a key file.
func FromEnv(name, value string) (*Keyring, error) {
	source := "$" + name
	value = strings.TrimSpace(value)
	var raw []byte
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(value); err == nil {
			raw = b
			break
		}
	}
	if len(raw) != KeySize {
		return nil, fmt.Errorf("%s must be the base64 of %d random bytes (openssl rand -base64 %d)", source, KeySize, KeySize)
	}
	sum := sha256.Sum256(raw)
	ky, err := newKey("env-"+hex.EncodeToString(sum[:4]), "", raw)
	if err != nil {
		return nil, err
	}
	return newKeyring(source, "", ky.id, []*key{ky})
}

// Ephemeral is a keyring of one random key held in memory only, for what
// needs sealing only while the process lives (the MCP face of `mcpflow
// mcp`, whose interrupts' request states are its own).
func Ephemeral() (*Keyring, error) {
	ky, err := generateKey(time.Now())
	if err != nil {
		return nil, err
	}
	return newKeyring("a key of this process", "", ky.id, []*key{ky})
}
