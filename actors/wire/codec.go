package wire

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Encode puts msg, for the actor target on another node, in an envelope.
// A message of no kind, or a node-local one, is refused.
func Encode(target string, msg any) (*Envelope, error) {
	k, ok := byType[reflect.TypeOf(msg)]
	switch {
	case !ok:
		return nil, fmt.Errorf("encode %T: not a message that crosses nodes (wire.Kinds)", msg)
	case k.Local != "":
		return nil, fmt.Errorf("encode %s: node-local: %s", k.Name, k.Local)
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", k.Name, err)
	}
	return &Envelope{Target: target, Kind: k.Name, Body: body}, nil
}

// Decode returns the message an envelope carries, as the Go value of its
// kind. A kind this node does not know (a newer node's) is an error.
func Decode(env *Envelope) (any, error) {
	k, ok := byName[env.GetKind()]
	if !ok || k.Local != "" {
		return nil, fmt.Errorf("decode: unknown message kind %q", env.GetKind())
	}
	v := reflect.New(k.Type)
	if err := json.Unmarshal(env.GetBody(), v.Interface()); err != nil {
		return nil, fmt.Errorf("decode %s: %w", k.Name, err)
	}
	return v.Elem().Interface(), nil
}
