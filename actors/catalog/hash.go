package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// SchemaHash fingerprints a JSON Schema as "sha256:<hex>" of its canonical
// JSON: keys sorted, no insignificant space, non-ASCII escaped as \uXXXX
// and no HTML escaping, the form Python's json.dumps(sort_keys=True,
// separators=(",", ":"), ensure_ascii=True) writes for the same document.
func SchemaHash(schema Object) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(schema); err != nil {
		return "", fmt.Errorf("hash schema: %w", err)
	}
	canonical := asciiEscape(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// asciiEscape rewrites every non-ASCII rune as a \uXXXX escape (surrogate
// pairs above the BMP). Non-ASCII bytes only occur inside JSON strings.
func asciiEscape(b []byte) []byte {
	var out bytes.Buffer
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		switch {
		case r < utf8.RuneSelf:
			out.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&out, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&out, `\u%04x`, r)
		}
	}
	return out.Bytes()
}
