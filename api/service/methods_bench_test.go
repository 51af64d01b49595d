package service

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// startFrame is a workflow.runs.start request as a client sends it.
const startFrame = `{"jsonrpc":"2.0","id":17,"method":"workflow.runs.start","params":{"deployment_id":"echo-deployment",` +
	`"workflow_input":{"message":"hello, world","count":3,"tags":["a","b"]},"trace_range":{"start":0,"limit":20}}}`

// BenchmarkParamsPath is what a request's params cost on their way to a
// handler: the frame's decode (jsonrpc.DecodeFrame), the contract's check
// (the edge's), and the typed decode of handle (the service's), for one
// runs.start frame and for a batch of 8. "single/baseline" adds back, in
// the same run, the pass DecodeFrame no longer makes for a single
// request: a whole-frame json.Valid scan. (A batch's former second decode
// of each entry cannot be added back faithfully from outside; compare it
// with the parent commit instead, docs/performance.md.)
func BenchmarkParamsPath(b *testing.B) {
	c := contract.Default()
	h := handle(func(context.Context, protocol.StartRunParams) (any, error) { return nil, nil })
	ctx := context.Background()
	batch := "[" + strings.TrimSuffix(strings.Repeat(startFrame+",", 8), ",") + "]"
	path := func(b *testing.B, frame []byte, baseline bool) {
		if baseline && !json.Valid(frame) {
			b.Fatal("invalid frame")
		}
		for _, req := range jsonrpc.DecodeFrame(frame, jsonrpc.DefaultMaxBatch).Requests() {
			if err := c.ValidateParams(req.Method, req.Params); err != nil {
				b.Fatal(err)
			}
			if _, err := h(ctx, req.Params); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, bm := range []struct {
		name     string
		frame    string
		baseline bool
	}{
		{"single/baseline", startFrame, true}, {"single", startFrame, false},
		{"batch8", batch, false},
	} {
		b.Run(bm.name, func(b *testing.B) {
			frame := []byte(bm.frame)
			b.ReportAllocs()
			for b.Loop() {
				path(b, frame, bm.baseline)
			}
		})
	}
	// The three stages on their own, for the share of each.
	params := jsonrpc.DecodeFrame([]byte(startFrame), 1).Entries[0].Request.Params
	b.Run("stage/frame", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			jsonrpc.DecodeFrame([]byte(startFrame), 1)
		}
	})
	b.Run("stage/valid", func(b *testing.B) { // the scan DecodeFrame no longer makes
		for b.Loop() {
			json.Valid([]byte(startFrame))
		}
	})
	b.Run("stage/contract", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = c.ValidateParams(protocol.MethodRunsStart, params)
		}
	})
	b.Run("stage/contract-decode", func(b *testing.B) { // the contract's share that is parsing
		b.ReportAllocs()
		for b.Loop() {
			var v any
			_ = json.Unmarshal(params, &v)
		}
	})
	b.Run("stage/typed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = h(ctx, params)
		}
	})
}
