package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	fastjson "github.com/segmentio/encoding/json"
)

// ValueMin is the size, in bytes of JSON, from which a durable store keeps
// a value of a run's records (its record, trace entries and events) once
// per run, however many records hold it: a tool's result is in the trace
// entry's output, often in its state changes, the run's state, its
// checkpoint's scope, the next step's resolved input and the run's
// output, and the record is written again at every commit.
const ValueMin = 4 << 10

// Values are the large values of the records of one run that Pack took
// out, by key: the hex SHA-256 of the value's JSON text, which is the
// value.
type Values map[string]string

// packedHeader is the first element of a packed record: the run whose
// values it refers to, and where each reference sits in the second
// element, the record with each value taken out left as null.
type packedHeader struct {
	Run  string     `json:"run"`
	Refs []valueRef `json:"refs"`
}

// valueRef says that the value of Key sits at byte At of a packed
// record's body, in place of the null there. It is a JSON array [at, key].
type valueRef struct {
	At  int
	Key string
}

func (r valueRef) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "[%d,%q]", r.At, r.Key), nil
}

func (r *valueRef) UnmarshalJSON(b []byte) error {
	var pair [2]json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil {
		return err
	}
	if err := json.Unmarshal(pair[0], &r.At); err != nil {
		return err
	}
	return json.Unmarshal(pair[1], &r.Key)
}

// Pack returns the JSON text of record, of run run, as a durable store
// keeps it. Each value within it of ValueMin bytes or more that holds no
// other such value is put in v under its key, and the text refers to it:
// the text is then a JSON array of a header and the record (Packed), which
// Unpack turns back into the record's JSON. A record with no such value is
// its plain JSON, a JSON object, as stores wrote before.
func (v Values) Pack(run string, record any) (string, error) {
	b, err := Marshal(record)
	if err != nil || len(b) < ValueMin {
		return string(b), err
	}
	p := packer{src: b, values: v, out: make([]byte, 0, min(len(b), 1<<16))}
	if _, err := p.value(0); err != nil {
		return "", fmt.Errorf("pack a record of run %q: %w", run, err)
	}
	if len(p.refs) == 0 {
		return string(b), nil
	}
	head, err := json.Marshal(packedHeader{Run: run, Refs: p.refs})
	if err != nil {
		return "", err
	}
	return "[" + string(head) + "," + string(p.out) + "]", nil
}

// Packed reports whether a stored record's text is packed (Pack): a JSON
// array whose first element is its header, where a plain record is a
// JSON object.
func Packed(text []byte) bool {
	return len(text) > 1 && text[0] == '[' && text[1] == '{'
}

// ValueLookup returns those of the values of run whose keys are keys that
// a store holds, by key: how a store reads them for Unpack.
type ValueLookup func(run string, keys []string) (map[string]string, error)

// Unpack returns the JSON of the record that text, as Pack gave it, holds:
// text itself when it is not packed, else the record with each value put
// back, which values looks up by key among those of the run it names.
func Unpack(text []byte, values ValueLookup) ([]byte, error) {
	if !Packed(text) {
		return text, nil
	}
	dec := json.NewDecoder(bytes.NewReader(text[1:]))
	var head packedHeader
	if err := dec.Decode(&head); err != nil {
		return nil, fmt.Errorf("read the header of a packed record: %w", err)
	}
	start := 1 + int(dec.InputOffset())
	if start >= len(text) || text[start] != ',' || text[len(text)-1] != ']' {
		return nil, fmt.Errorf("a packed record of run %q is cut short", head.Run)
	}
	body := text[start+1 : len(text)-1]
	keys := make([]string, len(head.Refs))
	size := len(body)
	for i, r := range head.Refs {
		keys[i] = r.Key
		if r.At < 0 || r.At+len(null) > len(body) || !bytes.Equal(body[r.At:r.At+len(null)], null) || i > 0 && r.At < head.Refs[i-1].At+len(null) {
			return nil, fmt.Errorf("a packed record of run %q refers to value %s at %d, where it has none", head.Run, r.Key, r.At)
		}
	}
	found, err := values(head.Run, keys)
	if err != nil {
		return nil, fmt.Errorf("read the values of a record of run %q: %w", head.Run, err)
	}
	for _, k := range keys {
		value, ok := found[k]
		if !ok {
			return nil, fmt.Errorf("a record of run %q refers to value %s, which the store does not hold", head.Run, k)
		}
		size += len(value) - len(null)
	}
	out := make([]byte, 0, size)
	at := 0
	for _, r := range head.Refs {
		out = append(append(out, body[at:r.At]...), found[r.Key]...)
		at = r.At + len(null)
	}
	return append(out, body[at:]...), nil
}

// Decoded returns the record of type T that text holds, as a store keeps
// it: Unpack with values, then JSON.
func Decoded[T any](text []byte, values ValueLookup) (T, error) {
	var v T
	text, err := Unpack(text, values)
	if err != nil {
		return v, err
	}
	return v, json.Unmarshal(text, &v)
}

// null is what a packed record's body holds where a value was taken out.
var null = []byte("null")

// ValueKey returns the key of a value's JSON text.
func ValueKey(text []byte) string {
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:])
}

// packer copies the JSON text src (as encoding/json writes it: compact,
// valid) to out, taking out the values of ValueMin bytes or more that hold
// no other such value.
type packer struct {
	src    []byte
	out    []byte
	refs   []valueRef
	values Values
}

// value copies the value that starts at src[i] and returns where it ends.
func (p *packer) value(i int) (end int, err error) {
	start, refs := len(p.out), len(p.refs)
	switch c := p.src[i]; c {
	case '{', '[':
		closer := byte(']')
		if c == '{' {
			closer = '}'
		}
		p.out = append(p.out, c)
		i++
		for first := true; ; first = false {
			if i >= len(p.src) {
				return 0, fmt.Errorf("unexpected end of JSON")
			}
			if p.src[i] == closer {
				break
			}
			if !first {
				if p.src[i] != ',' {
					return 0, fmt.Errorf("want ',' at byte %d", i)
				}
				p.out = append(p.out, ',')
				i++
			}
			if c == '{' {
				j, err := stringEnd(p.src, i)
				if err != nil {
					return 0, err
				}
				if j >= len(p.src) || p.src[j] != ':' {
					return 0, fmt.Errorf("want ':' at byte %d", j)
				}
				p.out = append(p.out, p.src[i:j+1]...)
				i = j + 1
			}
			if i, err = p.value(i); err != nil {
				return 0, err
			}
		}
		p.out = append(p.out, closer)
		end = i + 1
	case '"':
		if end, err = stringEnd(p.src, i); err != nil {
			return 0, err
		}
		p.out = append(p.out, p.src[i:end]...)
	default:
		end = i
		for end < len(p.src) && p.src[end] != ',' && p.src[end] != '}' && p.src[end] != ']' {
			end++
		}
		p.out = append(p.out, p.src[i:end]...)
	}
	if len(p.refs) == refs && len(p.out)-start >= ValueMin {
		text := p.out[start:]
		key := ValueKey(text)
		if _, ok := p.values[key]; !ok {
			p.values[key] = string(text)
		}
		p.out = append(p.out[:start], null...)
		p.refs = append(p.refs, valueRef{At: start, Key: key})
	}
	return end, nil
}

// stringEnd returns the index after the JSON string that starts at src[i].
func stringEnd(src []byte, i int) (int, error) {
	if src[i] != '"' {
		return 0, fmt.Errorf("want a string at byte %d", i)
	}
	for j := i + 1; j < len(src); {
		k := bytes.IndexAny(src[j:], "\"\\")
		if k < 0 {
			break
		}
		if src[j+k] == '"' {
			return j + k + 1, nil
		}
		j += k + 2 // a backslash and the byte it escapes
	}
	return 0, fmt.Errorf("a string from byte %d is not closed", i)
}

// Marshal encodes a record as the stores keep it: the JSON that
// encoding/json's Marshal writes (map keys sorted, HTML characters
// escaped), by segmentio's encoder, which walks a map[string]any without
// an allocation per entry (encoding/json copies each key and value out
// of the map by reflection: some 45 allocations a warm run). It does not
// know the `omitzero` option, which no record may use
// (TestNoRecordAsksForOmitzero).
func Marshal(v any) ([]byte, error) { return fastjson.Marshal(v) }
