package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/mcpflow/mcpflow/actors/suggest"
)

// docsConfig is where docs/operations.md describes the config file.
const docsConfig = "docs/operations.md#the-config-file"

// Problem is one thing wrong in a config document, where it is: the
// line and column (from 1) and the JSON path (server.sources[1].transport).
type Problem struct {
	Line, Column int
	Path         string
	Message      string
}

// ParseError is every problem found in a config document: a syntax
// error, or each unknown field (with the nearest known one), or a value of
// the wrong type. File names the document (Load sets it).
type ParseError struct {
	File     string
	Problems []Problem
}

func (e *ParseError) Error() string {
	file := e.File
	if file == "" {
		file = "config"
	}
	lines := make([]string, 0, len(e.Problems)+1)
	if len(e.Problems) > 1 {
		lines = append(lines, fmt.Sprintf("%s: %d problems", file, len(e.Problems)))
	}
	for _, p := range e.Problems {
		at := file
		if p.Line > 0 {
			at = fmt.Sprintf("%s:%d:%d", file, p.Line, p.Column)
		}
		if p.Path != "" {
			at += ": " + p.Path
		}
		lines = append(lines, at+": "+p.Message)
	}
	lines = append(lines, "see "+docsSection(e.Problems)+" for the config file's fields")
	return strings.Join(lines, "\n")
}

// docsSection is the section of docs/operations.md that covers the first
// problem's part of the config.
func docsSection(problems []Problem) string {
	if len(problems) == 0 {
		return docsConfig
	}
	path := problems[0].Path
	for prefix, section := range map[string]string{
		"server.sources":     "docs/operations.md#sources",
		"server.supervision": "docs/operations.md#connections-restarts-and-degraded",
		"server.store":       "docs/operations.md#the-store",
		"server.secrets":     "docs/operations.md#the-secrets-key",
		"server.cluster":     "docs/operations.md#a-cluster",
		"server.limits":      "docs/operations.md#limits",
		"server.retention":   "docs/operations.md#retention",
	} {
		if path == prefix || strings.HasPrefix(path, prefix+".") || strings.HasPrefix(path, prefix+"[") {
			return section
		}
	}
	return docsConfig
}

// findProblems reads a config document as File would be decoded and
// answers every problem, each with its position: a syntax error alone, or
// every unknown field with a did-you-mean. It finds no problem where
// decoding would find none of these.
func findProblems(data []byte) []Problem {
	var syntax *json.SyntaxError
	if err := json.Unmarshal(data, new(any)); errors.As(err, &syntax) {
		line, col := position(data, syntax.Offset)
		return []Problem{{Line: line, Column: col, Message: "invalid JSON: " + syntax.Error()}}
	} else if err != nil {
		return []Problem{{Message: "invalid JSON: " + err.Error()}}
	}
	w := walker{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	if err := w.value(reflect.TypeFor[File](), ""); err != nil {
		return []Problem{{Message: "invalid JSON: " + err.Error()}}
	}
	return w.problems
}

// typeProblem is a decoding error of a well formed document as a problem
// with its position; ok is false for another error.
func typeProblem(data []byte, err error) (Problem, bool) {
	var typ *json.UnmarshalTypeError
	if !errors.As(err, &typ) {
		return Problem{}, false
	}
	line, col := position(data, typ.Offset)
	return Problem{Line: line, Column: col, Path: typ.Field,
		Message: fmt.Sprintf("a %s is not a valid value here: want a %s", typ.Value, typ.Type)}, true
}

// position is the line and column (from 1) of a byte offset.
func position(data []byte, offset int64) (int, int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	return line, int(offset) - bytes.LastIndexByte(before, '\n')
}

// walker walks a document's tokens along the Go type it decodes into,
// noting each object key that type does not know.
type walker struct {
	data     []byte
	dec      *json.Decoder
	problems []Problem
}

// unmarshaler is the interface of types that decode themselves.
var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// value walks one value at path of type t (nil: any value is known).
func (w *walker) value(t reflect.Type, path string) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	t = known(t)
	switch tok {
	case json.Delim('{'):
		for w.dec.More() {
			key, err := w.dec.Token()
			if err != nil {
				return err
			}
			name, _ := key.(string)
			child, ok, names := member(t, name)
			if !ok {
				line, col := position(w.data, w.dec.InputOffset()-int64(len(name))-2)
				w.problems = append(w.problems, Problem{Line: line, Column: col, Path: join(path, name),
					Message: fmt.Sprintf("unknown field %q%s", name, suggest.DidYouMean(name, names))})
			}
			if err := w.value(child, join(path, name)); err != nil {
				return err
			}
		}
		_, err = w.dec.Token()
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.value(elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err = w.dec.Token()
	}
	if err == io.EOF {
		return nil
	}
	return err
}

// known is t without pointers, or nil when what it holds is not checked
// here: a type that decodes itself, an interface.
func known(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	return t
}

// member is the type of t's member name, whether t has it, and the names
// it has (for a suggestion). A map has every member; a type not checked
// (nil) too. Names match as encoding/json matches them, case folded.
func member(t reflect.Type, name string) (reflect.Type, bool, []string) {
	switch {
	case t == nil:
		return nil, true, nil
	case t.Kind() == reflect.Map:
		return t.Elem(), true, nil
	case t.Kind() != reflect.Struct:
		return nil, true, nil // a type error, which decoding reports
	}
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if strings.EqualFold(tag, name) {
			return f.Type, true, nil
		}
		names = append(names, tag)
	}
	return nil, false, names
}

// join is the JSON path of member name at path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
