package std

import "testing"

var recipeCases = []specCase{
	{spec: ExtractTextContent, name: "joins text blocks only", input: Object{"content": []any{
		Object{"type": "text", "text": "hello"},
		Object{"type": "image", "data": "...", "mimeType": "image/png"},
		Object{"type": "text", "text": "world"},
	}, "separator": "\n"}, wantOutcome: "ok", wantOutput: Object{"text": "hello\nworld"}},
	{spec: ExtractTextContent, name: "default separator", input: Object{"content": []any{
		Object{"type": "text", "text": "a"}, Object{"type": "text", "text": "b"},
	}}, wantOutcome: "ok", wantOutput: Object{"text": "ab"}},
	{spec: ExtractTextContent, name: "no content", input: Object{"content": []any{}}, wantOutcome: "ok", wantOutput: Object{"text": ""}},
	{spec: ExtractTextContent, name: "text block without text is skipped", input: Object{"content": []any{
		Object{"type": "text"}, Object{"type": "text", "text": "only"},
	}}, wantOutcome: "ok", wantOutput: Object{"text": "only"}},
	{spec: ExtractTextContent, name: "non-string text", input: Object{"content": []any{
		Object{"type": "text", "text": 3.0},
	}}, wantErr: `input field "content[0].text": expected string, got number`},
	{spec: ExtractTextContent, name: "block not an object", input: Object{"content": []any{"hello"}}, wantErr: `input field "content[0]": expected object, got string`, schemaRejects: true},
	{spec: ExtractTextContent, name: "missing content", input: Object{"isError": false}, wantErr: `input field "content" is required`, schemaRejects: true},
}

func TestRecipeSpecs(t *testing.T) {
	runSpecCases(t, recipeCases)
}
