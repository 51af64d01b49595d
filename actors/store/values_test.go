package store_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// lookup serves the values of run from v, and fails for any other run.
func lookup(t *testing.T, run string, v store.Values) func(string, []string) (map[string]string, error) {
	return func(r string, keys []string) (map[string]string, error) {
		is.New(t).Equal(r, run) // the packed record names its run
		found := map[string]string{}
		for _, k := range keys {
			if value, ok := v[k]; ok {
				found[k] = value
			}
		}
		return found, nil
	}
}

func TestARecordWithALargeValueIsPackedAndUnpacksToItsJSON(t *testing.T) {
	is := is.New(t)
	big := strings.Repeat(`a "quoted" \ line`+"\n", 1000) // escapes inside
	entry := workflow.TraceEntry{
		FrameID: "root", NodeID: "call", StepType: "node",
		ResolvedInput: workflow.Object{"message": big},
		Output:        workflow.Object{"content": []any{map[string]any{"type": "text", "text": big}}, "n": 1.5},
		StateChanges:  workflow.Object{"message": big, "list": []any{big, true, nil}},
	}
	values := store.Values{}
	text, err := values.Pack("run-1", entry)
	is.NoErr(err)
	is.True(store.Packed([]byte(text)))
	is.Equal(len(values), 1)            // the one large value, kept once
	is.True(len(text) < store.ValueMin) // the record refers to it, four times
	for _, v := range values {
		var s string
		is.NoErr(json.Unmarshal([]byte(v), &s))
		is.Equal(s, big)
	}

	plain, err := json.Marshal(entry)
	is.NoErr(err)
	back, err := store.Unpack([]byte(text), lookup(t, "run-1", values))
	is.NoErr(err)
	is.Equal(string(back), string(plain)) // the very JSON it was
}

func TestALargeValueThatHoldsOnlySmallOnesIsKeptWhole(t *testing.T) {
	is := is.New(t)
	items := make([]any, 2000)
	for i := range items {
		items[i] = map[string]any{"i": float64(i)}
	}
	values := store.Values{}
	text, err := values.Pack("run-1", workflow.Object{"items": items, "small": "x"})
	is.NoErr(err)
	is.Equal(len(values), 1) // the list, whole
	back, err := store.Unpack([]byte(text), lookup(t, "run-1", values))
	is.NoErr(err)
	var got workflow.Object
	is.NoErr(json.Unmarshal(back, &got))
	is.Equal(got, workflow.Object{"items": items, "small": "x"})
}

func TestASmallRecordIsItsPlainJSON(t *testing.T) {
	is := is.New(t)
	values := store.Values{}
	text, err := values.Pack("run-1", workflow.Object{"a": strings.Repeat("x", store.ValueMin/2)})
	is.NoErr(err)
	is.True(!store.Packed([]byte(text)))
	is.Equal(len(values), 0)
	back, err := store.Unpack([]byte(text), nil) // plain text needs no values
	is.NoErr(err)
	is.Equal(string(back), text)
}

func TestAPackedRecordWhoseValueIsMissingIsAnError(t *testing.T) {
	is := is.New(t)
	values := store.Values{}
	text, err := values.Pack("run-1", workflow.Object{"a": strings.Repeat("x", store.ValueMin)})
	is.NoErr(err)
	_, err = store.Unpack([]byte(text), lookup(t, "run-1", store.Values{}))
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "does not hold")) // names what is missing
}
