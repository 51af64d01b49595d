package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// Sealer seals auth record payloads at rest (package secrets implements
// it): Seal encrypts under the current key, with aad as additional data;
// Open decrypts a value Seal made, under the key it names; KeyOf names
// that key. Errors name key ids, never a key or a payload.
type Sealer interface {
	Seal(aad, plaintext []byte) (string, error)
	Open(aad []byte, sealed string) ([]byte, error)
	Current() string
	KeyOf(sealed string) (string, bool)
}

// AuthResealer is what a store that seals (one opened with WithSealer)
// adds to AuthRecords.
type AuthResealer interface {
	// ResealAuth, in one transaction, opens every auth record and seals
	// under the sealer's current key each one that is in clear or sealed
	// under another key, and returns how many it changed. A record that
	// does not open fails it, naming the record and the key, and nothing
	// is changed. A store that seals runs it at open, so a store written
	// in clear is sealed at its first open with a sealer.
	ResealAuth(ctx context.Context) (int, error)
}

// WithSealer makes a store keep auth record payloads sealed by s: SaveAuth
// stores them sealed, GetAuth and ListAuth return them opened, and the
// store runs ResealAuth at open. Without it a store keeps records as they
// are given and returns them as they are kept (sealed ones included:
// that is how `mcpflow store migrate` copies them).
func WithSealer(s Sealer) Option {
	return func(o *Options) { o.Sealer = s }
}

// authAAD is the additional data of a record's sealed payload: its id, so
// that a sealed payload opens only in the record it was sealed for.
func authAAD(id string) []byte { return []byte("mcpflow auth record\x00" + id) }

// SealAuth returns a as a store that seals keeps it: its payload sealed
// under s's current key into Sealed, and Payload nil. A nil s returns a.
func SealAuth(s Sealer, a AuthRecord) (AuthRecord, error) {
	if s == nil {
		return a, nil
	}
	plaintext, err := json.Marshal(a.Payload)
	if err != nil {
		return AuthRecord{}, fmt.Errorf("auth record %q: encode payload: %w", a.ID, err)
	}
	sealed, err := s.Seal(authAAD(a.ID), plaintext)
	if err != nil {
		return AuthRecord{}, fmt.Errorf("auth record %q: %w", a.ID, err)
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
	plaintext, err := s.Open(authAAD(a.ID), a.Sealed)
	if err != nil {
		return AuthRecord{}, fmt.Errorf("auth record %q: %w", a.ID, err)
	}
	var payload map[string]any
	if err := json.Unmarshal(plaintext, &payload); err != nil {
		return AuthRecord{}, fmt.Errorf("auth record %q: the opened payload is not a JSON object", a.ID)
	}
	a.Payload, a.Sealed = payload, ""
	return a, nil
}

// OpenAuths is OpenAuth of each record.
func OpenAuths(s Sealer, list []AuthRecord) ([]AuthRecord, error) {
	for i, a := range list {
		opened, err := OpenAuth(s, a)
		if err != nil {
			return nil, err
		}
		list[i] = opened
	}
	return list, nil
}

// ResealOne is what ResealAuth does to one kept record (s is not nil): it
// returns the record sealed under s's current key and true when it was in
// clear or under another key, the record as it is and false when it is
// already sealed under the current key (and opens), and an error when it
// does not open.
func ResealOne(s Sealer, kept AuthRecord) (AuthRecord, bool, error) {
	opened, err := OpenAuth(s, kept)
	if err != nil {
		return AuthRecord{}, false, err
	}
	if id, ok := s.KeyOf(kept.Sealed); ok && id == s.Current() {
		return kept, false, nil
	}
	sealed, err := SealAuth(s, opened)
	return sealed, err == nil, err
}
