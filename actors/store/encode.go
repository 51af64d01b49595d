package store

import fastjson "github.com/segmentio/encoding/json"

// Marshal encodes a record as the stores keep it: the JSON that
// encoding/json's Marshal writes (map keys sorted, HTML characters
// escaped), by segmentio's encoder, which walks a map[string]any without
// an allocation per entry (encoding/json copies each key and value out
// of the map by reflection: some 45 allocations a warm run). It does not
// know the `omitzero` option, which no record may use
// (TestNoRecordAsksForOmitzero).
func Marshal(v any) ([]byte, error) { return fastjson.Marshal(v) }
