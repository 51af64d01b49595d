// Package secrets owns the keys that seal secrets at rest and the sealing
// itself: AES-256-GCM under a key named by a key id, with the id of the
// record a ciphertext belongs to as additional data, so that a sealed
// value opens only under its own key and only for its own record.
//
// A Keyring holds one current key, which seals, and any number of older
// keys, which still open what they sealed. It is read from a key file
// (LoadFile, LoadOrCreateFile: JSON, mode 0600, see keyFile) or from an
// environment variable (FromEnv: one base64 key). Rotate makes a new key
// current, has every sealed value re-sealed under it, and then drops the
// older keys from the file.
//
// Nothing here knows what is sealed: the store (actors/store) seals auth
// record payloads and the secret transport values of source registry
// entries through the store.Sealer interface a Keyring implements. No key, and nothing opened, ever reaches an error or a log
// line: errors name key ids and files only.
package secrets
