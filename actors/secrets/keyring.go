package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// KeySize is the size of a key in bytes: AES-256.
const KeySize = 32

// sealedPrefix begins every sealed value; the key id follows, then the
// nonce and ciphertext in base64: "mcpflow-sealed:v1:<key id>:<base64>".
const sealedPrefix = "mcpflow-sealed:v1:"

// keyIDPattern is what a key id may be: it is kept beside each ciphertext
// and named in errors, so it is short and plain.
var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

var (
	// ErrMissingKey means a value is sealed under a key id the keyring
	// does not hold.
	ErrMissingKey = errors.New("the key it is sealed under is missing")
	// ErrWrongKey means the keyring's key of that id does not open the
	// value: another key was given that id, or the value was changed or
	// moved from another record.
	ErrWrongKey = errors.New("the key does not open it")
	// ErrNotSealed means a value is not in the sealed form at all.
	ErrNotSealed = errors.New("not a sealed value")
)

// key is one key of a keyring.
type key struct {
	id      string
	created string // RFC 3339, as the key file has it; "" for FromEnv
	raw     []byte
	aead    cipher.AEAD
}

func newKey(id, created string, raw []byte) (*key, error) {
	if !keyIDPattern.MatchString(id) {
		return nil, fmt.Errorf("key id %q must match %s", id, keyIDPattern)
	}
	if len(raw) != KeySize {
		return nil, fmt.Errorf("key %q is %d bytes; a key is %d", id, len(raw), KeySize)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("key %q: %w", id, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("key %q: %w", id, err)
	}
	return &key{id: id, created: created, raw: slices.Clone(raw), aead: aead}, nil
}

// Keyring seals under its current key and opens under any key it holds.
// It is safe for concurrent use; Rotate changes it in place, so a store
// that holds it seals under the new key from then on.
type Keyring struct {
	// source names where the keys come from in errors: "key file
	// /etc/mcpflow/secrets.key" or "$MCPFLOW_SECRETS_KEY".
	source string
	// path is the key file, "" when the keys come from elsewhere.
	path string

	// rotating holds Rotate to one at a time.
	rotating sync.Mutex

	mu      sync.RWMutex
	current string
	keys    []*key // in the key file's order
	// retired are the keys this keyring held that its file no longer
	// does: they still open, in memory only, what a read took from the
	// store just before a rotation re-sealed it.
	retired []*key
}

// newKeyring holds keys with current (one of them) sealing.
func newKeyring(source, path, current string, keys []*key) (*Keyring, error) {
	k := &Keyring{source: source, path: path}
	if err := k.set(current, keys); err != nil {
		return nil, err
	}
	return k, nil
}

// set replaces the keys; current must be one of them and ids unique.
func (k *Keyring) set(current string, keys []*key) error {
	seen := map[string]bool{}
	for _, ky := range keys {
		if seen[ky.id] {
			return fmt.Errorf("%s: key id %q is given twice", k.source, ky.id)
		}
		seen[ky.id] = true
	}
	if !seen[current] {
		return fmt.Errorf("%s: the current key %q is not one of its keys", k.source, current)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var retired []*key
	for _, old := range append(k.retired, k.keys...) {
		if !seen[old.id] {
			retired = append(retired, old)
		}
	}
	k.current, k.keys, k.retired = current, keys, retired
	return nil
}

// Source names where the keys come from, for messages.
func (k *Keyring) Source() string { return k.source }

// Path is the key file, "" when the keys come from the environment.
func (k *Keyring) Path() string { return k.path }

// Current is the id of the key that seals.
func (k *Keyring) Current() string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.current
}

// IDs are the ids of every key the keyring's file (or variable) holds,
// the current one included, sorted.
func (k *Keyring) IDs() []string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	ids := make([]string, 0, len(k.keys))
	for _, ky := range k.keys {
		ids = append(ids, ky.id)
	}
	slices.Sort(ids)
	return ids
}

// find returns the key of id, or nil: one of the file's, or else one it
// retired.
func (k *Keyring) find(id string) *key {
	k.mu.RLock()
	defer k.mu.RUnlock()
	for _, ky := range append(slices.Clip(k.keys), k.retired...) {
		if ky.id == id {
			return ky
		}
	}
	return nil
}

// Seal encrypts plaintext under the current key with aad as additional
// data (the id of the record it belongs to), in the sealed form
// "mcpflow-sealed:v1:<key id>:<base64 of nonce and ciphertext>".
//
// A keyring read from a file reads the file again first, so that it
// seals under the key the file has as current: the one another node's
// rotation made current, and never under a key the file no longer holds.
// A key file that cannot be read fails the seal.
func (k *Keyring) Seal(aad, plaintext []byte) (string, error) {
	if err := k.refresh(); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	ky := k.find(k.Current())
	nonce := make([]byte, ky.aead.NonceSize(), ky.aead.NonceSize()+len(plaintext)+ky.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal under key %q: %w", ky.id, err)
	}
	sealed := ky.aead.Seal(nonce, nonce, plaintext, aad)
	return sealedPrefix + ky.id + ":" + base64.RawStdEncoding.EncodeToString(sealed), nil
}

// KeyOf returns the id of the key value is sealed under, and false when
// value is not sealed.
func KeyOf(value string) (string, bool) {
	rest, ok := strings.CutPrefix(value, sealedPrefix)
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, ":")
	return id, ok && keyIDPattern.MatchString(id)
}

// KeyOf is the package's KeyOf, for store.Sealer.
func (k *Keyring) KeyOf(value string) (string, bool) { return KeyOf(value) }

// Open decrypts a sealed value with the key it names and aad as
// additional data. A key the keyring lacks is ErrMissingKey; one that does
// not open the value (another key under that id, a changed value, or a
// value moved from another record) is ErrWrongKey. A keyring read from a
// file reads the file again once before it reports a key missing, so a
// key another node's rotation added to a shared file is found.
func (k *Keyring) Open(aad []byte, value string) ([]byte, error) {
	id, ok := KeyOf(value)
	if !ok {
		return nil, ErrNotSealed
	}
	ky := k.find(id)
	if ky == nil {
		if err := k.refresh(); err != nil {
			return nil, fmt.Errorf("sealed under key %q: %w", id, err)
		}
		ky = k.find(id)
	}
	if ky == nil {
		return nil, fmt.Errorf("sealed under key %q, which %s does not hold (it holds %s): %w",
			id, k.source, strings.Join(k.IDs(), ", "), ErrMissingKey)
	}
	data, err := base64.RawStdEncoding.DecodeString(value[len(sealedPrefix)+len(id)+1:])
	if err != nil || len(data) < ky.aead.NonceSize()+ky.aead.Overhead() {
		return nil, fmt.Errorf("sealed under key %q: the sealed value is damaged: %w", id, ErrWrongKey)
	}
	nonce, ciphertext := data[:ky.aead.NonceSize()], data[ky.aead.NonceSize():]
	plaintext, err := ky.aead.Open(nil, nonce, ciphertext, aad)
	if err != nil {
		return nil, fmt.Errorf("sealed under key %q, which %s holds but which does not open it (another key under that id, or a value changed or moved from another record): %w",
			id, k.source, ErrWrongKey)
	}
	return plaintext, nil
}

// refresh reads the keyring's file again, for a rotation another node
// made, unless this keyring is rotating: its own rotation writes the file
// and sets the keys itself, and a read made before that write, set after
// it, would make the old key current again (the re-seal would then leave
// values under the key the rotation drops). Reads and rotations are
// ordered by k.rotating; a seal or open during a rotation needs no read,
// as the rotation holds every key.
func (k *Keyring) refresh() error {
	if k.path == "" || !k.rotating.TryLock() {
		return nil
	}
	defer k.rotating.Unlock()
	return k.reload()
}

// reload reads the key file again and makes what it holds the keyring's;
// the caller holds k.rotating.
func (k *Keyring) reload() error {
	f, err := readKeyFile(k.path)
	if err != nil {
		return err
	}
	current, keys, err := f.keys(k.source)
	if err != nil {
		return err
	}
	return k.set(current, keys)
}
