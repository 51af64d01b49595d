package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// DefaultMaxOutputBytes bounds the output of a built-in step when
// Options set no MaxOutputBytes: 16 MiB, the server's default bound on
// one upstream answer (server.limits.max_result_bytes).
const DefaultMaxOutputBytes = 16 << 20

// ErrOutputTooLarge fails a built-in step whose output is larger than
// Options.MaxOutputBytes. Its text, "result_too_large", starts the
// step's error, as an upstream answer over its source's bound does.
var ErrOutputTooLarge = errors.New("result_too_large")

// CheckOutputSize fails the output of built-in spec when its JSON would
// be longer than limit bytes (DefaultMaxOutputBytes when 0). A tool's
// output needs no check: its answer was bounded as it was read.
func CheckOutputSize(spec string, output Object, limit int64) error {
	if limit <= 0 {
		limit = DefaultMaxOutputBytes
	}
	left := limit
	if fitsJSON(output, &left) {
		return nil
	}
	return fmt.Errorf("%w: the output of %s is larger than %d bytes (server.limits.max_result_bytes); have the workflow pass on less, or raise the limit", ErrOutputTooLarge, spec, limit)
}

// fitsJSON takes the length of v's JSON from *left and reports whether
// any is left, walking v without encoding it and stopping as soon as
// none is. A string counts its bytes and quotes, not the escapes
// encoding/json would add.
func fitsJSON(v any, left *int64) bool {
	switch v := v.(type) {
	case nil:
		*left -= len64("null")
	case bool:
		*left -= len64(strconv.FormatBool(v))
	case string:
		*left -= len64(v) + 2
	case float64:
		var b [32]byte
		*left -= int64(len(strconv.AppendFloat(b[:0], v, 'g', -1, 64)))
	case map[string]any:
		*left -= brackets(len(v))
		for k, e := range v {
			*left -= len64(k) + 4 // quotes, colon, the comma or bracket after
			if *left < 0 || !fitsJSON(e, left) {
				return false
			}
		}
	case []any:
		*left -= brackets(len(v))
		for _, e := range v {
			*left-- // the comma or bracket after
			if *left < 0 || !fitsJSON(e, left) {
				return false
			}
		}
	default: // a Go shape a built-in made by hand
		data, err := json.Marshal(v)
		if err != nil {
			return true // not this check's to refuse
		}
		*left -= int64(len(data))
	}
	return *left >= 0
}

func len64(s string) int64 { return int64(len(s)) }

// brackets is what an object or array of n members takes beyond them and
// the comma or closing bracket after each: its opening bracket, and its
// closing one when it is empty.
func brackets(n int) int64 {
	if n == 0 {
		return 2
	}
	return 1
}
