package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// Sealer seals secrets at rest (package secrets implements it): auth
// record payloads, and the secret transport values of source registry
// entries (see SealEntry). Seal encrypts under the current key, with aad
// as additional data; Open decrypts a value Seal made, under the key it
// names; KeyOf names that key. Errors name key ids, never a key or a
// payload.
type Sealer interface {
	Seal(aad, plaintext []byte) (string, error)
	Open(aad []byte, sealed string) ([]byte, error)
	Current() string
	KeyOf(sealed string) (string, bool)
}

// Resealer is what a store that seals (one opened with WithSealer) adds
// to AuthRecords and SourceRegistry.
type Resealer interface {
	// Reseal, in one transaction, opens every auth record and source
	// registry entry and seals under the sealer's current key each one
	// whose secrets are in clear or sealed under another key, and returns
	// how many it changed. One that does not open fails it, naming the
	// record and the key, and nothing is changed. A store that seals runs
	// it at open, so a store written in clear is sealed at its first open
	// with a sealer.
	Reseal(ctx context.Context) (int, error)
}

// WithSealer makes a store keep its secrets sealed by s: SaveAuth stores
// auth payloads sealed and PutRegistryEntry the secret values of an
// entry's transport, GetAuth, ListAuth, GetRegistryEntry and
// ListRegistryEntries return them opened, and the store runs Reseal at
// open. Without it a store keeps records as they are given and returns
// them as they are kept (sealed ones included: that is how `mcpflow store
// migrate` copies them).
func WithSealer(s Sealer) Option {
	return func(o *Options) { o.Sealer = s }
}

// authAAD is the additional data of a record's sealed payload: its id, so
// that a sealed payload opens only in the record it was sealed for.
func authAAD(id string) []byte { return []byte("mcpflow auth record\x00" + id) }

// sealJSON seals the JSON of v under s's current key, with aad.
func sealJSON(s Sealer, aad []byte, v any) (string, error) {
	plaintext, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode: %w", err)
	}
	return s.Seal(aad, plaintext)
}

// openJSON opens what sealJSON sealed with aad into the JSON object
// *out.
func openJSON(s Sealer, aad []byte, sealed string, out *map[string]any) error {
	plaintext, err := s.Open(aad, sealed)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(plaintext, out); err != nil {
		return fmt.Errorf("what opened is not a JSON object")
	}
	return nil
}

// SealAuth returns a as a store that seals keeps it: its payload sealed
// under s's current key into Sealed, and Payload nil. A nil s returns a.
func SealAuth(s Sealer, a AuthRecord) (AuthRecord, error) {
	if s == nil {
		return a, nil
	}
	sealed, err := sealJSON(s, authAAD(a.ID), a.Payload)
	if err != nil {
		return AuthRecord{}, fmt.Errorf("auth record %q: payload: %w", a.ID, err)
	}
	a.Payload, a.Sealed = nil, sealed
	return a, nil
}

// OpenAuth returns a kept record as its callers see it: its Sealed
// payload opened into Payload. A record kept in clear (before sealing) is
// returned as it is; so is every record when s is nil.
func OpenAuth(s Sealer, a AuthRecord) (AuthRecord, error) {
	if s == nil || a.Sealed == "" {
		return a, nil
	}
	var payload map[string]any
	if err := openJSON(s, authAAD(a.ID), a.Sealed, &payload); err != nil {
		return AuthRecord{}, fmt.Errorf("auth record %q: %w", a.ID, err)
	}
	a.Payload, a.Sealed = payload, ""
	return a, nil
}

// OpenAuths is OpenAuth of each record.
func OpenAuths(s Sealer, list []AuthRecord) ([]AuthRecord, error) {
	return openAll(s, list, OpenAuth)
}

// openAll is open of each of list, in place.
func openAll[T any](s Sealer, list []T, open func(Sealer, T) (T, error)) ([]T, error) {
	for i, v := range list {
		opened, err := open(s, v)
		if err != nil {
			return nil, err
		}
		list[i] = opened
	}
	return list, nil
}

// ResealOne is what Reseal does to one kept auth record (s is not nil):
// it returns the record sealed under s's current key and true when it
// was in clear or under another key, the record as it is and false when
// it is already sealed under the current key (and opens), and an error
// when it does not open.
func ResealOne(s Sealer, kept AuthRecord) (AuthRecord, bool, error) {
	return reseal(s, kept, func(a AuthRecord) string { return a.Sealed }, OpenAuth, SealAuth)
}

// ResealKept re-seals each of the kept records with reseal (ResealOne,
// ResealEntry), writes back with put each one it changed, and counts
// them; an error when one does not open or put fails.
func ResealKept[T any](s Sealer, kept []T, reseal func(Sealer, T) (T, bool, error), put func(T) error) (int, error) {
	n := 0
	for _, r := range kept {
		sealed, changed, err := reseal(s, r)
		if err != nil {
			return 0, err
		}
		if !changed {
			continue
		}
		if err := put(sealed); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// reseal is what Reseal does to one kept value whose sealed part sealedOf
// returns: see ResealOne. A value with nothing to seal is left as it is.
func reseal[T any](s Sealer, kept T, sealedOf func(T) string, open, seal func(Sealer, T) (T, error)) (T, bool, error) {
	var none T
	opened, err := open(s, kept)
	if err != nil {
		return none, false, err
	}
	if id, ok := s.KeyOf(sealedOf(kept)); ok && id == s.Current() {
		return kept, false, nil
	}
	sealed, err := seal(s, opened)
	if err != nil {
		return none, false, err
	}
	return sealed, sealedOf(sealed) != sealedOf(kept), nil
}
