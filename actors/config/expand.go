package config

// ${VAR} references: any string value of a config (but not object keys, and
// not a source's metadata, which clients are shown as written) may say
// ${NAME} or ${NAME:-default}; Parse replaces them with the environment
// variable NAME (or default when NAME is unset or empty). $${ is a literal
// ${. An unset variable without a default is an error naming it. Expanded
// values are treated as secrets: errors show the reference, not the value.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// lookupFunc finds an environment variable, as os.LookupEnv does.
type lookupFunc func(name string) (string, bool)

// varNamePattern is what a ${NAME} may name.
var varNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// minSecretLen is the shortest expanded value errors are scrubbed of:
// shorter ones would mangle ordinary words.
const minSecretLen = 4

// UnsetVariablesError says which variables the config references, without
// a default, that the environment does not set.
type UnsetVariablesError struct {
	// Names are the unset variables, sorted.
	Names []string
	// Where lists, for each name, the config paths that reference it.
	Where map[string][]string
}

func (e *UnsetVariablesError) Error() string {
	where := make([]string, 0, len(e.Names))
	for _, n := range e.Names {
		where = append(where, n+" at "+strings.Join(e.Where[n], ", "))
	}
	noun, pronoun := "environment variable "+e.Names[0]+" is", "it"
	if len(e.Names) > 1 {
		noun, pronoun = "environment variables "+strings.Join(e.Names, ", ")+" are", "them"
	}
	return fmt.Sprintf("%s not set (%s); set %s, or give a default: ${NAME:-default}", noun, strings.Join(where, "; "), pronoun)
}

// AsWritten is the transport as the config file has it, with its ${VAR}
// references rather than their values: the one to show people.
func (t Transport) AsWritten() Transport {
	if t.written != nil {
		return *t.written
	}
	return t
}

// expandFile expands the references in data, the document written decodes
// (strictly) to, and returns the expanded config with each source's
// transport as written kept (AsWritten), and the expanded values mapped to
// the references they replaced (for redact).
func expandFile(data []byte, written *File, lookup lookupFunc) (*File, map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, nil, fmt.Errorf("parse config: %w", err)
	}
	x := &expander{lookup: lookup, secrets: map[string]string{}, unset: map[string][]string{}}
	tree = x.walk(tree, "")
	if len(x.unset) > 0 {
		x.errs = append(x.errs, &UnsetVariablesError{Names: slices.Sorted(maps.Keys(x.unset)), Where: x.unset})
	}
	if err := errors.Join(x.errs...); err != nil {
		return nil, nil, fmt.Errorf("expand config: %w", err)
	}
	if !x.changed {
		return written, nil, nil
	}
	expanded, err := json.Marshal(tree)
	if err != nil {
		return nil, nil, fmt.Errorf("expand config: %w", err)
	}
	f, err := decodeStrict(expanded)
	if err != nil {
		return nil, nil, fmt.Errorf("expand config: %w", redact(err, x.secrets))
	}
	for i := range f.Server.Sources {
		if w := written.Server.Sources[i].Transport; !reflect.DeepEqual(w, f.Server.Sources[i].Transport) {
			f.Server.Sources[i].Transport.written = &w
		}
	}
	return f, x.secrets, nil
}

// expander replaces references in a decoded JSON tree.
type expander struct {
	lookup lookupFunc
	// secrets maps each expanded value to its reference, "${NAME}".
	secrets map[string]string
	// unset maps each unset variable to the paths that reference it.
	unset   map[string][]string
	errs    []error
	changed bool
}

// walk expands every string below v, whose path in the config is path.
func (x *expander) walk(v any, path string) any {
	switch v := v.(type) {
	case string:
		return x.expand(v, path)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if k == "metadata" {
				continue
			}
			v[k] = x.walk(v[k], joinPath(path, k))
		}
	case []any:
		for i, e := range v {
			v[i] = x.walk(e, indexPath(path, i, e))
		}
	}
	return v
}

// expand replaces the references in s.
func (x *expander) expand(s, path string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	x.changed = true
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		if i > 0 && s[i-1] == '$' { // $${: a literal ${
			b.WriteString(s[:i-1] + "${")
			s = s[i+2:]
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			x.errs = append(x.errs, fmt.Errorf("%s: a ${ without its closing } (write $${ for a literal ${)", path))
			return s
		}
		name, def, hasDefault := strings.Cut(s[i+2:i+2+end], ":-")
		if !varNamePattern.MatchString(name) {
			x.errs = append(x.errs, fmt.Errorf("%s: ${%s} does not name an environment variable (letters, digits and _, not starting with a digit; write $${ for a literal ${)", path, name))
			return s
		}
		value, ok := x.lookup(name)
		switch {
		case ok && value != "":
			x.secrets[value] = "${" + name + "}"
		case hasDefault:
			value = def
		case !ok:
			x.unset[name] = append(x.unset[name], path)
		}
		b.WriteString(s[:i] + value)
		s = s[i+2+end+1:]
	}
}

// joinPath is the path of key k below path.
func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// indexPath is the path of element i, e, of the array at path: named by
// its id when it has one (server.sources[github.default]).
func indexPath(path string, i int, e any) string {
	if obj, ok := e.(map[string]any); ok {
		if id, ok := obj["id"].(string); ok && id != "" {
			return fmt.Sprintf("%s[%s]", path, id)
		}
	}
	return fmt.Sprintf("%s[%d]", path, i)
}

// redact is err with every expanded value in its message replaced by the
// reference it came from. The result wraps nothing, so that no caller can
// reach the unredacted message.
func redact(err error, secrets map[string]string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	values := slices.SortedFunc(maps.Keys(secrets), func(a, b string) int { return len(b) - len(a) })
	msg := err.Error()
	for _, v := range values {
		if len(v) < minSecretLen {
			continue
		}
		msg = strings.ReplaceAll(msg, v, secrets[v])
		// As %q shows it, when that differs.
		if quoted := strconv.Quote(v); quoted[1:len(quoted)-1] != v {
			msg = strings.ReplaceAll(msg, quoted[1:len(quoted)-1], secrets[v])
		}
	}
	return errors.New(msg)
}
