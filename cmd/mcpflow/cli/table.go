package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// table prints aligned columns for people.
type table struct {
	w *tabwriter.Writer
}

func newTable(w io.Writer) *table {
	return &table{w: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
}

// row prints one row of cells.
func (t *table) row(cells ...any) {
	s := make([]string, len(cells))
	for i, c := range cells {
		s[i] = cell(c)
	}
	fmt.Fprintln(t.w, strings.Join(s, "\t"))
}

// pairs prints label, value pairs one to a line.
func (t *table) pairs(kv ...any) {
	for i := 0; i+1 < len(kv); i += 2 {
		t.row(fmt.Sprint(kv[i])+":", kv[i+1])
	}
}

// line prints text as is, outside the columns (after what is buffered).
func (t *table) line(format string, a ...any) {
	_ = t.w.Flush()
	fmt.Fprintf(t.w, format+"\n", a...)
}

func (t *table) flush() error { return t.w.Flush() }

// cell is v as one table cell: "-" for nothing, lists joined by commas,
// objects as compact JSON, on one line.
func cell(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		s = x
	case *string:
		if x == nil {
			return "-"
		}
		s = *x
	case *int64:
		if x == nil {
			return "-"
		}
		s = strconv.FormatInt(*x, 10)
	case *int:
		if x == nil {
			return "-"
		}
		s = strconv.Itoa(*x)
	case bool:
		s = map[bool]string{true: "yes", false: "no"}[x]
	case *bool:
		if x == nil {
			return "-"
		}
		return cell(*x)
	case []string:
		s = strings.Join(x, ",")
	case int, int64, float64:
		s = fmt.Sprint(x)
	default:
		rv := reflect.ValueOf(v)
		if (rv.Kind() == reflect.Map || rv.Kind() == reflect.Slice) && rv.IsNil() {
			return "-"
		}
		data, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(data)
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	return s
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// clipPtr is clip of an optional string.
func clipPtr(s *string, n int) string {
	if s == nil {
		return ""
	}
	return clip(*s, n)
}
