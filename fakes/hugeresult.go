package fakes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HugeTool is the tool WithHuge adds: huge {bytes, sse?} answers with one
// text block of bytes 'x's.
const HugeTool = "huge"

// HugeResource is the resource template WithHuge adds: reading
// fake://huge/N answers with a text of N 'x's.
const HugeResource = "fake://huge/{bytes}"

// WithHuge gives s the tool huge {bytes, sse?} → {"content": [{"type":
// "text", "text": "xxx…"}]}, whose text is bytes long, and the resources
// of HugeResource. Served by s itself the text is built in memory; the
// tool's, served over HTTP through StreamHuge, is written as it goes, so
// that a test can send an answer of hundreds of megabytes without
// holding it. It returns s.
func WithHuge(s *mcp.Server) *mcp.Server {
	mcp.AddTool(s, &mcp.Tool{Name: HugeTool, Description: "Answer with a text of the given number of bytes.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in hugeIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.Bytes)}}}, nil, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: HugeResource, Name: "huge", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			n, err := strconv.Atoi(strings.TrimPrefix(req.Params.URI, "fake://huge/"))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("read %s: want fake://huge/<bytes>", req.Params.URI)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: strings.Repeat("x", n)}}}, nil
		})
	return s
}

type hugeIn struct {
	Bytes int `json:"bytes" jsonschema:"the length of the text"`
	// SSE asks StreamHuge for an event stream rather than a JSON body.
	SSE bool `json:"sse,omitempty" jsonschema:"answer as an event stream (over HTTP)"`
}

// StreamHuge serves h, except that it answers a tools/call of HugeTool
// itself, writing the text in pieces: as one application/json body, or
// with sse as one event of a text/event-stream. The answer's id comes
// after its result, as the TypeScript SDK writes it. A call whose client
// goes away stops being written.
func StreamHuge(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var call struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string `json:"name"`
				Arguments hugeIn `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &call) != nil || call.Method != "tools/call" || call.Params.Name != HugeTool {
			h.ServeHTTP(w, r)
			return
		}
		writeHuge(w, call.ID, call.Params.Arguments)
	})
}

// writeHuge writes the answer to call id of huge, in pieces.
func writeHuge(w http.ResponseWriter, id json.RawMessage, in hugeIn) {
	head, tail := `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"`, `"}]},"id":`+string(id)+`}`
	if in.SSE {
		w.Header().Set("Content-Type", "text/event-stream")
		head, tail = "event: message\ndata: "+head, tail+"\n\n"
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	if _, err := io.WriteString(w, head); err != nil {
		return
	}
	piece := bytes.Repeat([]byte{'x'}, 64<<10)
	for left := in.Bytes; left > 0; left -= len(piece) {
		if _, err := w.Write(piece[:min(left, len(piece))]); err != nil {
			return // the client went away
		}
	}
	_, _ = io.WriteString(w, tail)
}
