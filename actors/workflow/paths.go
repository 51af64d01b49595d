package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Path roots. Graph paths read "input", "state" or "context"; node-local
// paths are rooted at "local"; writable paths at "state".
const (
	RootInput   = "input"
	RootState   = "state"
	RootContext = "context"
	RootLocal   = "local"
)

// Path is a parsed path: a root and the keys below it. Its string form
// joins the keys with dots, quoting a key TOML-style when it is not a bare
// key (letters, digits, '_' and '-'): state."person.name".first. A
// node-local path omits its root, and "." is the whole local payload.
type Path struct {
	Root  string
	Parts []string
}

// String is the canonical form of p.
func (p Path) String() string {
	var b strings.Builder
	if p.Root != RootLocal {
		b.WriteString(p.Root)
	} else if len(p.Parts) == 0 {
		return "."
	}
	for i, part := range p.Parts {
		if i > 0 || p.Root != RootLocal {
			b.WriteByte('.')
		}
		if isBareKey(part) {
			b.WriteString(part)
		} else {
			b.WriteString(strconv.Quote(part))
		}
	}
	return b.String()
}

// isBareKey reports whether s needs no quotes in a path.
func isBareKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// splitKeys splits a dotted path into its keys: bare keys, or quoted keys
// in double quotes (with Go/TOML basic-string escapes) or single quotes
// (literal).
func splitKeys(s string) ([]string, error) {
	var keys []string
	for i := 0; ; {
		if i >= len(s) {
			return nil, fmt.Errorf("path %q ends with a dot", s)
		}
		var key string
		switch s[i] {
		case '"':
			end := closingQuote(s, i)
			if end < 0 {
				return nil, fmt.Errorf("path %q has an unterminated quoted key", s)
			}
			k, err := strconv.Unquote(s[i : end+1])
			if err != nil {
				return nil, fmt.Errorf("path %q has a bad quoted key: %w", s, err)
			}
			key, i = k, end+1
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("path %q has an unterminated quoted key", s)
			}
			key, i = s[i+1:i+1+end], i+end+2
		default:
			end := strings.IndexByte(s[i:], '.')
			if end < 0 {
				end = len(s) - i
			}
			key = s[i : i+end]
			if !isBareKey(key) {
				return nil, fmt.Errorf("path %q has an invalid key %q (quote keys with other characters)", s, key)
			}
			i += end
		}
		keys = append(keys, key)
		if i == len(s) {
			return keys, nil
		}
		if s[i] != '.' {
			return nil, fmt.Errorf("path %q needs a dot after key %q", s, key)
		}
		i++
	}
}

// closingQuote finds the double quote that ends the quoted key at s[start].
func closingQuote(s string, start int) int {
	for i := start + 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// pathKind is what a path may address.
type pathKind int

const (
	graphPath pathKind = iota // input|state|context, any depth
	localPath                 // node-local, "." for the whole payload
	statePath                 // state with at least one key
)

func (k pathKind) String() string {
	switch k {
	case localPath:
		return "node-local path"
	case statePath:
		return "state path"
	default:
		return "graph path"
	}
}

// parsePath parses the string form of a path of kind k.
func parsePath(s string, k pathKind) (Path, error) {
	if k == localPath {
		if s == "." {
			return Path{Root: RootLocal}, nil
		}
		keys, err := splitKeys(s)
		if err != nil {
			return Path{}, err
		}
		return Path{Root: RootLocal, Parts: keys}, nil
	}
	keys, err := splitKeys(s)
	if err != nil {
		return Path{}, err
	}
	p := Path{Root: keys[0], Parts: keys[1:]}
	return p, p.check(k)
}

// check reports whether p is a valid path of kind k.
func (p Path) check(k pathKind) error {
	switch k {
	case localPath:
		if p.Root != RootLocal {
			return fmt.Errorf("%s must have root local, not %q", k, p.Root)
		}
	case statePath:
		if p.Root != RootState || len(p.Parts) == 0 {
			return fmt.Errorf("target %q must be a field path under state, such as state.result", p)
		}
	default:
		switch p.Root {
		case RootInput, RootState, RootContext:
		default:
			return fmt.Errorf("path %q must start with input, state or context", p)
		}
	}
	for _, part := range p.Parts {
		if part == "" {
			return fmt.Errorf("path %q has an empty key", p)
		}
	}
	return nil
}

// PathField is a path as a draft or plan holds it: its string or
// structural ({root, parts}) JSON form, parsed for one kind of path.
// Decoding never fails on a malformed path: the path keeps what was
// written and Err says what is wrong, so that validation can report it
// where it stands. It encodes as its canonical string.
type PathField struct {
	Path
	kind pathKind
	raw  json.RawMessage
	err  error
}

// GraphPath, LocalPath and StatePath are path fields of each kind.
type (
	GraphPath struct{ PathField }
	LocalPath struct{ PathField }
	StatePath struct{ PathField }
)

// GraphOf, LocalOf and StateOf parse the string form of a path. Like a
// decoded path, a malformed one keeps what was written, and Err says why.
func GraphOf(s string) GraphPath { return GraphPath{fieldFrom(s, graphPath)} }
func LocalOf(s string) LocalPath { return LocalPath{fieldFrom(s, localPath)} }
func StateOf(s string) StatePath { return StatePath{fieldFrom(s, statePath)} }

func fieldFrom(s string, k pathKind) PathField {
	p, err := parsePath(s, k)
	if err != nil {
		raw, _ := json.Marshal(s)
		return PathField{kind: k, raw: raw, err: err}
	}
	return PathField{Path: p, kind: k}
}

// fieldOf returns a path field of kind k holding p.
func fieldOf(p Path, k pathKind) PathField { return PathField{Path: p, kind: k, err: p.check(k)} }

// Err is why the path is malformed, or nil.
func (f PathField) Err() error { return f.err }

// IsZero reports whether nothing was written.
func (f PathField) IsZero() bool { return f.Root == "" && f.raw == nil && f.err == nil }

func (f PathField) MarshalJSON() ([]byte, error) {
	if f.err != nil && f.raw != nil {
		return f.raw, nil
	}
	return json.Marshal(f.Path.String())
}

func (p *GraphPath) UnmarshalJSON(b []byte) error { return p.decode(b, graphPath) }
func (p *LocalPath) UnmarshalJSON(b []byte) error { return p.decode(b, localPath) }
func (p *StatePath) UnmarshalJSON(b []byte) error { return p.decode(b, statePath) }

func (f *PathField) decode(b []byte, k pathKind) error {
	*f = PathField{kind: k, raw: bytes.Clone(b)}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		f.Path, f.err = parsePath(s, k)
		return nil
	}
	var structural struct {
		Root  string   `json:"root"`
		Parts []string `json:"parts"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&structural); err != nil {
		f.err = fmt.Errorf("a %s is a string or {root, parts}: %s", k, b)
		return nil
	}
	f.Path = Path{Root: structural.Root, Parts: structural.Parts}
	if f.Parts == nil {
		f.Parts = []string{}
	}
	f.err = f.Path.check(k)
	return nil
}

// lookup walks parts into v.
func lookup(v any, parts []string) (any, bool) {
	for _, p := range parts {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

// assign sets parts in obj to v, creating intermediate objects. An empty
// parts list merges v (an object) into obj.
func assign(obj Object, parts []string, v any) error {
	if len(parts) == 0 {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("whole-payload target needs an object, got %s", jsonType(v))
		}
		for k, x := range m {
			obj[k] = x
		}
		return nil
	}
	for _, p := range parts[:len(parts)-1] {
		next, ok := obj[p].(map[string]any)
		if !ok {
			next = Object{}
			obj[p] = next
		}
		obj = next
	}
	obj[parts[len(parts)-1]] = v
	return nil
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, int, int64, json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}
