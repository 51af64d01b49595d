// Package jsonconv owns the one conversion the packages that read JSON
// documents share: from one JSON-shaped Go value to another through its
// JSON, strictly (a key the target has no field for is an error).
package jsonconv

import (
	"bytes"
	"encoding/json"
)

// Strict converts in to out through in's JSON; a key out has no field for
// is an error, as is JSON that does not fit out.
func Strict(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}
