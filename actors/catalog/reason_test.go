package catalog_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
)

func TestBoundReasonCutsLongTextAtARuneAndSaysHowMuch(t *testing.T) {
	is := is.New(t)
	is.Equal(catalog.BoundReason("short"), "short")     // what fits is kept whole
	long := strings.Repeat("é", catalog.MaxReasonBytes) // 2 bytes a rune
	got := catalog.BoundReason(long)
	is.True(utf8.ValidString(got))                                                            // never cut inside a rune
	is.True(strings.HasSuffix(got, "… [2048 more bytes cut]"))                                // the marker says how much went
	is.Equal(len(strings.TrimSuffix(got, "… [2048 more bytes cut]")), catalog.MaxReasonBytes) // the kept part is the bound
}

func TestToolErrorTextIsTheTextBlocks(t *testing.T) {
	is := is.New(t)
	out := catalog.Object{"content": []any{
		map[string]any{"type": "text", "text": "Invalid resourceId: 0."},
		map[string]any{"type": "image", "data": "iVBO", "mimeType": "image/png"},
		map[string]any{"type": "text", "text": "Must be a finite positive integer."},
	}}
	is.Equal(catalog.ToolErrorText(out), "Invalid resourceId: 0.\nMust be a finite positive integer.")
	is.Equal(catalog.ToolErrorText(catalog.Object{"content": []any{}}), "the tool reported an error and said nothing more")
	is.Equal(catalog.ToolErrorText(catalog.Object{"content": []any{}, "structuredContent": map[string]any{"code": 7.0}}),
		`the tool reported an error: {"content":[],"structuredContent":{"code":7}}`) // no text: what it did say
	huge := catalog.Object{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("x", 10_000)}}}
	is.True(len(catalog.ToolErrorText(huge)) < catalog.MaxReasonBytes+64) // bounded
}
