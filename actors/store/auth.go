package store

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
)

// The formatting and logging methods of AuthRecord show its id, scheme,
// metadata and payload key names; no payload value ever reaches them.
var (
	_ fmt.Formatter  = AuthRecord{}
	_ fmt.Stringer   = AuthRecord{}
	_ fmt.GoStringer = AuthRecord{}
	_ slog.LogValuer = AuthRecord{}
	_ fmt.Formatter  = (*AuthRecord)(nil)
	_ fmt.Stringer   = (*AuthRecord)(nil)
	_ fmt.GoStringer = (*AuthRecord)(nil)
	_ slog.LogValuer = (*AuthRecord)(nil)
)

// PayloadKeys returns the names of the payload's keys, sorted: what may be
// shown of a payload.
func (a AuthRecord) PayloadKeys() []string {
	return slices.Sorted(maps.Keys(a.Payload))
}

// String describes a without its payload values.
func (a AuthRecord) String() string {
	return fmt.Sprintf("AuthRecord{ID:%q Scheme:%q Metadata:%v PayloadKeys:%q}",
		a.ID, a.Scheme, a.Metadata, a.PayloadKeys())
}

// GoString describes a, for %#v, without its payload values.
func (a AuthRecord) GoString() string {
	return fmt.Sprintf("store.AuthRecord{ID:%q, Scheme:%q, Metadata:%#v, PayloadKeys:%#v}",
		a.ID, a.Scheme, a.Metadata, a.PayloadKeys())
}

// Format makes every verb print a as String does (GoString for %#v), so
// that no verb, %d or %x included, reaches the payload.
func (a AuthRecord) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, a.GoString())
		return
	}
	fmt.Fprint(f, a.String())
}

// LogValue implements slog.LogValuer: a logs as a group of its id, scheme,
// metadata and payload_keys.
//
// slog resolves a LogValuer only where it is the logged value: a slice or
// map of AuthRecords is not one, and slog.JSONHandler would marshal it,
// payload values included. Log records one at a time, or their ids.
func (a AuthRecord) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", a.ID),
		slog.String("scheme", a.Scheme),
		slog.Any("metadata", a.Metadata),
		slog.Any("payload_keys", a.PayloadKeys()),
	)
}
