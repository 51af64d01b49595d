package jsonconv_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/jsonconv"
)

type target struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

func TestStrictConvertsAndRefusesUnknownKeys(t *testing.T) {
	is := is.New(t)
	var out target
	is.NoErr(jsonconv.Strict(map[string]any{"name": "a", "count": 2}, &out)) // known keys convert
	is.Equal(out, target{Name: "a", Count: 2})

	is.True(jsonconv.Strict(map[string]any{"name": "a", "extra": 1}, &out) != nil) // an unknown key is an error
	is.True(jsonconv.Strict(map[string]any{"count": "two"}, &out) != nil)          // a value of the wrong type is an error
	is.True(jsonconv.Strict(func() {}, &out) != nil)                               // a value with no JSON is an error
}
