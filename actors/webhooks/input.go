package webhooks

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// headerPrefix marks an input map source that is a request header.
const headerPrefix = "header:"

// CheckInputMap refuses a map with a source that is neither a JSON
// Pointer ("" or starting with "/") nor "header:<Name>".
func CheckInputMap(m map[string]string) error {
	for field, src := range m {
		if field == "" {
			return fmt.Errorf("input_map: a field name is empty")
		}
		if name, ok := strings.CutPrefix(src, headerPrefix); ok {
			if name == "" {
				return fmt.Errorf("input_map.%s: %q names no header", field, src)
			}
			continue
		}
		if src != "" && !strings.HasPrefix(src, "/") {
			return fmt.Errorf("input_map.%s: %q is neither a JSON Pointer (/a/b) nor header:<Name>", field, src)
		}
	}
	return nil
}

// MapInput is the workflow input of a delivery: the whole JSON body when
// m is empty; else an object with each of m's fields taken from the body
// at its JSON Pointer (RFC 6901) or from the named header. A pointer that
// finds nothing leaves its field out (the input schema decides whether it
// was required); a header that is absent too.
func MapInput(m map[string]string, body []byte, header http.Header) (any, error) {
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("the body is not JSON")
	}
	if len(m) == 0 {
		return doc, nil
	}
	out := make(map[string]any, len(m))
	for field, src := range m {
		if name, ok := strings.CutPrefix(src, headerPrefix); ok {
			if v := header.Get(name); v != "" {
				out[field] = v
			}
			continue
		}
		if v, ok := pointer(doc, src); ok {
			out[field] = v
		}
	}
	return out, nil
}

// pointer resolves the JSON Pointer p in doc.
func pointer(doc any, p string) (any, bool) {
	if p == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) || (len(tok) > 1 && tok[0] == '0') {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
