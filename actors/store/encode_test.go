package store

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
)

// TestMarshalWritesWhatEncodingJSONWrites checks that the stores' record
// encoder writes, byte for byte, what encoding/json writes, for records
// whose maps hold what a run's state and results hold: keys to sort,
// characters to escape, numbers at the edges of both float formats,
// invalid UTF-8, nested maps and arrays, and the types that marshal
// themselves.
func TestMarshalWritesWhatEncodingJSONWrites(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 12, 7, 17, 0, 0, 123456789, time.UTC)
	values := workflow.Object{
		"z": 1, "a": "<b>&amp;</b>", "é": "\u2028\u2029", "bad": "\xff\xfe", "ctl": "\x01\t\n",
		"floats":  []any{0.1, 1e21, 1e20, 1e-7, 1e-6, -0.0, 123456789.125, math.MaxFloat64, float32(0.1)},
		"ints":    []any{int64(math.MinInt64), uint64(math.MaxUint64), 0},
		"nested":  map[string]any{"b": []any{map[string]any{"y": nil, "x": true}}, "a": json.RawMessage(`{"k": [1, 2]}`)},
		"empty":   map[string]any{},
		"nothing": nil,
		"when":    at,
	}
	records := []any{
		Run{ID: "run-1", Status: RunRunning, Input: values, State: values, CreatedAt: at, UpdatedAt: at, Output: workflow.Object{"result": values}},
		workflow.TraceEntry{NodeID: "step", Output: values},
		RunEvent{RunID: "run-1", Seq: 3, Kind: RunEventStepLog, Log: &RunEventMessage{Data: json.RawMessage(`"<x>"`)}},
	}
	for _, r := range records {
		want, err := json.Marshal(r)
		is.NoErr(err)
		got, err := Marshal(r)
		is.NoErr(err)
		is.Equal(string(got), string(want)) // the same bytes as encoding/json
	}
	_, err := Marshal(workflow.Object{"nan": math.NaN()})
	is.True(err != nil) // what encoding/json refuses is refused
}

// TestNoRecordAsksForOmitzero keeps the records the stores encode clear
// of the `omitzero` option, which segmentio's encoder (Marshal) does not
// know: it would write a zero field that encoding/json leaves out.
func TestNoRecordAsksForOmitzero(t *testing.T) {
	is := is.New(t)
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(ty.Elem(), path)
		case reflect.Struct:
			for f := range ty.Fields() {
				is.True(!strings.Contains(f.Tag.Get("json"), "omitzero")) // no omitzero: Marshal would not honour it
				if t.Failed() {
					t.Logf("%s.%s asks for omitzero", path, f.Name)
					return
				}
				walk(f.Type, path+"."+f.Name)
			}
		}
	}
	for _, record := range []any{Run{}, workflow.TraceEntry{}, RunEvent{}, Event{}, Workspace{}, Artifact{}, Deployment{},
		Schedule{}, Webhook{}, WebhookDelivery{}, RegistryEntry{}, AuthRecord{}, IdempotencyKey{}} {
		ty := reflect.TypeOf(record)
		walk(ty, ty.String())
	}
}
