package std

import "strings"

// Recipes: specs composed from the standard ones, run in one step.

// ExtractTextContent turns an MCP tool result into text.
const ExtractTextContent = RecipesSource + ".extract_text_content"

func recipeSpecs() []Spec {
	return []Spec{
		newSpec(RecipesSource, "extract_text_content",
			`Join the "text" of every content block whose type is "text" (e.g. an MCP tool result's content) with separator (default empty). Blocks of other types, and text blocks without a "text" field, are skipped.`,
			[]string{OutcomeOK},
			objectSchema(Object{
				"content":   arrayOf(anyObject("A content block such as {\"type\": \"text\", \"text\": \"...\"}."), "The content blocks of a tool result."),
				"separator": withDefault(typed("string", "Inserted between consecutive texts."), ""),
			}, "content"),
			objectSchema(Object{"text": typed("string", "The joined text.")}, "text"),
			ok(extractTextContent)),
	}
}

// extractTextContent is filter_items(type == "text") then
// extract_field("text") then concat, fused into one pass.
func extractTextContent(in Object) (Object, error) {
	blocks, err := objectItemsField(in, "content")
	if err != nil {
		return nil, err
	}
	sep, err := optionalStringField(in, "separator", "")
	if err != nil {
		return nil, err
	}
	texts := make([]string, 0, len(blocks))
	for i, block := range blocks {
		if !jsonEqual(block["type"], "text") {
			continue
		}
		raw, present := block["text"]
		if !present {
			continue
		}
		text, isString := raw.(string)
		if !isString {
			return nil, fieldErr(itemField("content", i)+".text", "string", raw)
		}
		texts = append(texts, text)
	}
	return Object{"text": strings.Join(texts, sep)}, nil
}
