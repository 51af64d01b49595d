package contract_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpflow/mcpflow/api/contract"
)

func BenchmarkValidateParams(b *testing.B) {
	c := contract.Default()
	for _, bm := range []struct {
		name   string
		params json.RawMessage
	}{
		{"valid", json.RawMessage(`{"deployment_id":"d1","workflow_input":{"text":"hello","n":3},"trace_range":{"start":0,"limit":20}}`)},
		{"invalid", json.RawMessage(`{"deployment_id":"d1","trace_range":{"limit":500}}`)},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = c.ValidateParams("workflow.runs.start", bm.params)
			}
		})
	}
}

func BenchmarkValidateResult(b *testing.B) {
	c := contract.Default()
	run := completedRun()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.ValidateResult("workflow.runs.start", run); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := contract.Load(); err != nil {
			b.Fatal(err)
		}
	}
}
