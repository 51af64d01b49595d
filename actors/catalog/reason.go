package catalog

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxReasonBytes bounds the text that says why a call failed (a tool's
// error result, an upstream's JSON-RPC error) wherever mcpflow carries it:
// a step's error, the run's error, the events and the faces. A longer text
// keeps its first MaxReasonBytes bytes and ends with a marker saying how
// much was cut; the whole result stays in the step's output.
const MaxReasonBytes = 2048

// BoundReason returns s cut to MaxReasonBytes (at a rune boundary) and
// marked, or s when it fits.
func BoundReason(s string) string {
	if len(s) <= MaxReasonBytes {
		return s
	}
	cut := MaxReasonBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… [%d more bytes cut]", s[:cut], len(s)-cut)
}

// ToolErrorText is what a tool's error result (isError) says, from the
// output the result was projected to ({"content": [...]}): its text
// blocks, one a line; with none, the output as JSON. Bounded by
// BoundReason.
func ToolErrorText(output Object) string {
	blocks, _ := output["content"].([]any)
	var texts []string
	for _, b := range blocks {
		block, _ := b.(map[string]any)
		if text, ok := block["text"].(string); ok && block["type"] == "text" && strings.TrimSpace(text) != "" {
			texts = append(texts, text)
		}
	}
	if len(texts) > 0 {
		return BoundReason(strings.Join(texts, "\n"))
	}
	_, onlyContent := output["content"]
	if len(output) == 0 || len(output) == 1 && onlyContent && len(blocks) == 0 {
		return "the tool reported an error and said nothing more"
	}
	data, err := json.Marshal(output)
	if err != nil {
		return "the tool reported an error, which is not JSON: " + err.Error()
	}
	return BoundReason("the tool reported an error: " + string(data))
}
