// Package schema owns JSON Schema validation for the workflow runtime.
//
// The runtime validates workflow input, every step's input and output
// against the capability's schemas (MCP tool inputSchema/outputSchema),
// state after each commit against the state schema, interrupt request and
// resume payloads, and the workflow output. All of it goes through a
// [Validator], which compiles each distinct schema once and keeps the
// compiled form in a bounded LRU cache keyed by a SHA-256 of the schema's
// content, so validation on the hot path costs one hash of the schema plus
// the validation itself.
//
// Schemas arrive as decoded JSON ([Object]); instances are decoded JSON
// values (map[string]any, []any, float64, string, bool, nil; json.Number and
// Go integers are accepted too). Validation uses
// github.com/santhosh-tekuri/jsonschema/v6, which supports drafts 4, 6, 7,
// 2019-09 and 2020-12:
//
//   - A schema that declares "$schema" is compiled under that draft.
//   - A schema without "$schema" is compiled as draft 2020-12. If it is not
//     a valid 2020-12 schema but is a valid draft-07 (or draft-04) schema,
//     for example because it uses the array form of "items", it is compiled
//     under that older draft instead. Draft-07 style "definitions" with
//     "$ref": "#/definitions/..." and "dependencies" work under both.
//   - Unknown keywords (such as mcpflow's "reducer" extension inside state
//     schema properties) are ignored.
//   - "format" is an annotation under 2019-09/2020-12 and an assertion under
//     draft-07 and older, as the respective drafts specify.
//   - Regular expressions use Go's RE2 syntax. A "pattern" that RE2 cannot
//     compile (for example an ECMA-262 lookahead) is not enforced by
//     [Validator.Validate], so a third-party tool schema using one still
//     works; [Validator.Check] reports it as an error.
//
// Nothing is ever fetched: a "$ref" (or "$schema") that points outside the
// schema document, other than to the standard meta-schemas that are built
// into the validator, is a compile error wrapping [ErrRemoteRef]. Nothing is
// read from the file system either.
//
// A failed validation returns a [*Violation] naming the instance location
// (a JSON pointer) and the failing keyword.
package schema

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Object is a JSON Schema as decoded JSON.
type Object = map[string]any

// DefaultMaxEntries is the cache bound used by [Default] and by [New] when
// given a bound below 1.
const DefaultMaxEntries = 4096

// ErrInvalidSchema is wrapped by every error reporting that a schema itself
// is invalid (as opposed to an instance not matching it).
var ErrInvalidSchema = errors.New("invalid JSON schema")

// ErrRemoteRef is wrapped (together with [ErrInvalidSchema]) when a schema
// refers to a document outside itself.
var ErrRemoteRef = errors.New("remote reference not allowed")

// Default is a process-wide validator with a sensible bound.
var Default = New(DefaultMaxEntries)

// Validator compiles schemas once and caches them by content. It is safe
// for concurrent use.
type Validator struct {
	max int

	mu      sync.Mutex
	lru     *list.List // of *entry, most recently used at the front
	entries map[[sha256.Size]byte]*list.Element
	hits    uint64
	misses  uint64

	compiles atomic.Uint64
}

// entry is one cached compilation. It is inserted into the cache before it
// is compiled; once makes concurrent users of the same schema wait for a
// single compilation instead of each compiling it.
type entry struct {
	key      [sha256.Size]byte
	once     sync.Once
	compiled *Compiled
	err      error
}

// Stats is a snapshot of a validator's cache counters.
type Stats struct {
	Entries  int    // schemas currently cached
	Hits     uint64 // lookups answered from the cache
	Misses   uint64 // lookups that had to compile
	Compiles uint64 // compilations performed
}

// New returns a validator caching at most maxEntries compiled schemas,
// evicting the least recently used. A maxEntries below 1 means
// [DefaultMaxEntries].
func New(maxEntries int) *Validator {
	if maxEntries < 1 {
		maxEntries = DefaultMaxEntries
	}
	return &Validator{
		max:     maxEntries,
		lru:     list.New(),
		entries: make(map[[sha256.Size]byte]*list.Element),
	}
}

// Validate checks instance against schema. An empty or nil schema accepts
// anything. The error is a *Violation (errors.As) when the instance does
// not match, or another error (wrapping [ErrInvalidSchema]) when the schema
// itself is invalid.
func (v *Validator) Validate(schema Object, instance any) error {
	c, err := v.Compile(schema)
	if err != nil {
		return err
	}
	return c.Validate(instance)
}

// Check compiles a schema and reports whether it is a valid JSON Schema
// (used by validators of drafts). Unlike [Validator.Validate] it also
// rejects regular expressions that the validator cannot enforce.
func (v *Validator) Check(schema Object) error {
	c, err := v.Compile(schema)
	if err != nil {
		return err
	}
	if len(c.unsupported) > 0 {
		return fmt.Errorf("%w: unsupported regular expression %q (RE2 syntax is required)", ErrInvalidSchema, c.unsupported[0])
	}
	return nil
}

// Compile returns the compiled form of schema, from the cache when the same
// content was compiled before. Callers that validate many instances against
// one schema can keep the result and skip hashing the schema on each call.
// An empty or nil schema compiles to a [Compiled] that accepts anything.
func (v *Validator) Compile(schema Object) (*Compiled, error) {
	if len(schema) == 0 {
		return acceptAll, nil
	}
	key, err := hashSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	e := v.lookup(key)
	// Whoever gets here first compiles; concurrent users of the same schema
	// wait for that single compilation. All of them hold the same content.
	e.once.Do(func() {
		v.compiles.Add(1)
		// A panic inside the library must not leave a nil compilation
		// behind (which would accept everything); make it an error.
		defer func() {
			if r := recover(); r != nil {
				e.compiled, e.err = nil, fmt.Errorf("%w: compiler panic: %v", ErrInvalidSchema, r)
			}
		}()
		e.compiled, e.err = compile(schema)
	})
	return e.compiled, e.err
}

// lookup returns the cache entry for key, creating it when absent.
func (v *Validator) lookup(key [sha256.Size]byte) *entry {
	v.mu.Lock()
	defer v.mu.Unlock()
	if el, ok := v.entries[key]; ok {
		v.hits++
		v.lru.MoveToFront(el)
		return el.Value.(*entry)
	}
	v.misses++
	e := &entry{key: key}
	v.entries[key] = v.lru.PushFront(e)
	for v.lru.Len() > v.max {
		oldest := v.lru.Back()
		v.lru.Remove(oldest)
		delete(v.entries, oldest.Value.(*entry).key)
	}
	return e
}

// Stats returns a snapshot of the cache counters.
func (v *Validator) Stats() Stats {
	v.mu.Lock()
	defer v.mu.Unlock()
	return Stats{Entries: v.lru.Len(), Hits: v.hits, Misses: v.misses, Compiles: v.compiles.Load()}
}

// Compiled is a compiled schema. It is immutable and safe for concurrent
// use.
type Compiled struct {
	s           *jsonschema.Schema // nil accepts anything
	unsupported []string           // patterns RE2 cannot compile; not enforced
}

var acceptAll = &Compiled{}

// Validate checks instance against the compiled schema. The error is a
// *Violation when the instance does not match.
func (c *Compiled) Validate(instance any) error {
	if c == nil || c.s == nil {
		return nil
	}
	err := c.s.Validate(instance)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return violationFrom(ve)
	}
	return err
}

// baseURL is the location every schema is compiled at. Each compilation uses
// its own compiler, so one fixed URL suffices; it never leaves this package
// except stripped out of error messages.
const (
	baseDir = "mem:///"
	baseURL = baseDir + "schema.json"
)

// fallbackDrafts are tried, in order, for a schema without "$schema" that
// is not a valid 2020-12 schema.
var fallbackDrafts = []*jsonschema.Draft{jsonschema.Draft7, jsonschema.Draft4}

// compile compiles schema into an independent copy (so later mutation of
// the caller's map cannot change a cached compilation).
func compile(schema Object) (*Compiled, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	c, err := compileDraft(raw, jsonschema.Draft2020)
	if err == nil {
		return c, nil
	}
	var sve *jsonschema.SchemaValidationError
	if _, declared := schema["$schema"]; !declared && errors.As(err, &sve) {
		for _, d := range fallbackDrafts {
			if c, ferr := compileDraft(raw, d); ferr == nil {
				return c, nil
			}
		}
	}
	return nil, compileError(err)
}

func compileDraft(raw []byte, draft *jsonschema.Draft) (*Compiled, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	out := &Compiled{}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(draft)
	c.UseLoader(refuseLoader{})
	c.UseRegexpEngine(func(expr string) (jsonschema.Regexp, error) {
		re, err := regexp.Compile(expr)
		if err != nil {
			if !slices.Contains(out.unsupported, expr) {
				out.unsupported = append(out.unsupported, expr)
			}
			return matchAll(expr), nil
		}
		return re, nil
	})
	if err := c.AddResource(baseURL, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(baseURL)
	if err != nil {
		return nil, err
	}
	out.s = s
	return out, nil
}

// matchAll stands in for a regular expression RE2 cannot compile.
type matchAll string

func (m matchAll) String() string        { return string(m) }
func (matchAll) MatchString(string) bool { return true }

// refuseLoader replaces the library's default loader (which reads file://
// URLs) so that compiling a schema never performs I/O.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) { return nil, ErrRemoteRef }

// compileError turns a compiler error into one wrapping ErrInvalidSchema,
// with the internal base URL removed from the text.
func compileError(err error) error {
	var lue *jsonschema.LoadURLError
	if errors.As(err, &lue) {
		return fmt.Errorf("%w: %w: %q", ErrInvalidSchema, ErrRemoteRef, strings.TrimPrefix(lue.URL, baseDir))
	}
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			vio := violationFrom(ve)
			return fmt.Errorf("%w: %s", ErrInvalidSchema, vio.Error())
		}
	}
	msg := strings.ReplaceAll(err.Error(), baseURL, "")
	return fmt.Errorf("%w: %s", ErrInvalidSchema, msg)
}

// hashSchema returns a SHA-256 over an injective, key-order-independent
// encoding of the schema. It walks the decoded JSON directly, which is
// considerably cheaper than marshaling it.
func hashSchema(schema Object) ([sha256.Size]byte, error) {
	h := hasher{buf: make([]byte, 0, 512)}
	if err := h.value(schema); err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(h.buf), nil
}

type hasher struct{ buf []byte }

func (h *hasher) str(tag byte, s string) {
	h.buf = append(h.buf, tag)
	h.buf = binary.AppendUvarint(h.buf, uint64(len(s)))
	h.buf = append(h.buf, s...)
}

func (h *hasher) value(v any) error {
	switch x := v.(type) {
	case nil:
		h.buf = append(h.buf, 'n')
	case bool:
		if x {
			h.buf = append(h.buf, 't')
		} else {
			h.buf = append(h.buf, 'f')
		}
	case string:
		h.str('s', x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("unsupported number %v", x)
		}
		h.buf = append(h.buf, 'd')
		h.buf = binary.BigEndian.AppendUint64(h.buf, math.Float64bits(x))
	case json.Number:
		h.str('j', string(x))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		h.buf = append(h.buf, '{')
		h.buf = binary.AppendUvarint(h.buf, uint64(len(keys)))
		for _, k := range keys {
			h.str('k', k)
			if err := h.value(x[k]); err != nil {
				return err
			}
		}
	case []any:
		h.buf = append(h.buf, '[')
		h.buf = binary.AppendUvarint(h.buf, uint64(len(x)))
		for _, e := range x {
			if err := h.value(e); err != nil {
				return err
			}
		}
	default:
		// Anything else (ints, typed slices, json.RawMessage, structs) is
		// hashed by its JSON encoding, which is what gets compiled.
		b, err := json.Marshal(x)
		if err != nil {
			return err
		}
		h.str('m', string(b))
	}
	return nil
}
