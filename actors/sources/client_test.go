package sources_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/sources"
)

// A registry entry takes a client block, and an update changes it; a bad
// one is malformed, with the error naming what is wrong.
func TestRegistryEntryKeepsItsClientBlock(t *testing.T) {
	is := is.New(t)
	src, _, _ := loaded(t)
	ctx := bounded(t)
	doc := entryDoc("reg.one")
	doc["client"] = map[string]any{"elicitation": "refuse", "roots": []any{map[string]any{"uri": "file:///srv/a", "name": "a"}}}
	e, err := src.Add(ctx, doc)
	is.NoErr(err)
	is.Equal(e.Client["elicitation"], "refuse")

	e, err = src.Update(ctx, "reg.one", map[string]any{"client": map[string]any{"sampling": "interrupt", "log_level": "debug"}})
	is.NoErr(err)
	is.Equal(e.Client, map[string]any{"sampling": "interrupt", "log_level": "debug"})

	_, err = src.Update(ctx, "reg.one", map[string]any{"client": map[string]any{"sampling": "always"}})
	is.True(errors.Is(err, sources.ErrMalformed))
	is.True(strings.Contains(err.Error(), `client.sampling must be "refuse", "interrupt" or "client", got "always"`))
	got, err := src.Inspect(ctx, "reg.one")
	is.NoErr(err)
	is.Equal(got.Client["sampling"], "interrupt") // the refused update changed nothing
}
