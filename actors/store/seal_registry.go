package store

import (
	"fmt"
	"maps"
)

// secretTransportKeys are the keys of a registry entry's transport whose
// values are secret, each with the key under which it is shown: env and
// header values are shown by their names only (env_keys, header_keys), a
// URL without its userinfo and query values (url). This is the one rule:
// the API shows a stored transport by it (sources.ShownTransport) and a
// store that seals keeps these values sealed (SealEntry).
var secretTransportKeys = map[string]string{"env": "env_keys", "headers": "header_keys", "url": "url"}

// SecretTransportKey reports whether the value of key in a registry
// entry's transport is secret, and the key under which it is shown.
func SecretTransportKey(key string) (shownAs string, secret bool) {
	shownAs, secret = secretTransportKeys[key]
	return shownAs, secret
}

// entryAAD is the additional data of an entry's sealed transport values:
// its id, so that they open only in the entry they were sealed for.
func entryAAD(id string) []byte { return []byte("mcpflow source registry entry\x00" + id) }

// SealEntry returns e as a store that seals keeps it: the values of its
// transport's secret keys (SecretTransportKey) sealed under s's current
// key into Sealed, and left out of Transport. An entry whose transport
// has none is returned as it is; so is every entry when s is nil.
func SealEntry(s Sealer, e RegistryEntry) (RegistryEntry, error) {
	if s == nil {
		return e, nil
	}
	secret, rest := map[string]any{}, map[string]any{}
	for k, v := range e.Transport {
		if _, ok := secretTransportKeys[k]; ok {
			secret[k] = v
		} else {
			rest[k] = v
		}
	}
	if len(secret) == 0 {
		return e, nil
	}
	sealed, err := sealJSON(s, entryAAD(e.ID), secret)
	if err != nil {
		return RegistryEntry{}, fmt.Errorf("source registry entry %q: transport: %w", e.ID, err)
	}
	e.Transport, e.Sealed = rest, sealed
	return e, nil
}

// OpenEntry returns a kept entry as its callers see it: the transport
// values in Sealed opened back into Transport. An entry kept in clear
// (before sealing) is returned as it is; so is every entry when s is nil.
func OpenEntry(s Sealer, e RegistryEntry) (RegistryEntry, error) {
	if s == nil || e.Sealed == "" {
		return e, nil
	}
	var secret map[string]any
	if err := openJSON(s, entryAAD(e.ID), e.Sealed, &secret); err != nil {
		return RegistryEntry{}, fmt.Errorf("source registry entry %q: %w", e.ID, err)
	}
	t := maps.Clone(e.Transport)
	if t == nil {
		t = map[string]any{}
	}
	maps.Copy(t, secret)
	e.Transport, e.Sealed = t, ""
	return e, nil
}

// OpenEntries is OpenEntry of each entry.
func OpenEntries(s Sealer, list []RegistryEntry) ([]RegistryEntry, error) {
	return openAll(s, list, OpenEntry)
}

// ResealEntry is what Reseal does to one kept registry entry (s is not
// nil), as ResealOne to an auth record; an entry whose transport holds no
// secret is left as it is.
func ResealEntry(s Sealer, kept RegistryEntry) (RegistryEntry, bool, error) {
	return reseal(s, kept, func(e RegistryEntry) string { return e.Sealed }, OpenEntry, SealEntry)
}
