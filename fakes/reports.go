package fakes

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WithReports gives s tools that report while they run, and returns s:
//
//   - report {progress, logs, level?} → {sent}: sends progress
//     notifications/progress about its own call (progress i of total
//     `progress`, message "step i"), then `logs` notifications/message at
//     level (default "info", data "log i"), then answers at once: the
//     last report goes right before the answer. A flood is report with
//     large counts.
//   - log_later {ms, level?} → {}: answers at once, then, ms
//     milliseconds later, sends one log message (data "later"): a log
//     outside any call.
//
// The level below which go-sdk's server sends no log message is the
// client's to set (logging/setLevel: mcpflow sends its source's
// client.log_level).
func WithReports(s *mcp.Server) *mcp.Server {
	mcp.AddTool(s, &mcp.Tool{Name: "report", Description: "Send progress and log notifications about this call, then answer."}, report)
	mcp.AddTool(s, &mcp.Tool{Name: "log_later", Description: "Answer, then send a log message ms milliseconds later."}, logLater)
	return s
}

type reportIn struct {
	Progress int    `json:"progress,omitempty"`
	Logs     int    `json:"logs,omitempty"`
	Level    string `json:"level,omitempty"`
}

type reportOut struct {
	Sent int `json:"sent"`
}

func report(ctx context.Context, req *mcp.CallToolRequest, in reportIn) (*mcp.CallToolResult, reportOut, error) {
	token := req.Params.GetProgressToken()
	sent := 0
	for i := 1; i <= in.Progress && token != nil; i++ {
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(in.Progress), Message: fmt.Sprintf("step %d", i)})
		if err != nil {
			return nil, reportOut{}, fmt.Errorf("progress %d: %w", i, err)
		}
		sent++
	}
	level := mcp.LoggingLevel(in.Level)
	if level == "" {
		level = "info"
	}
	for i := 1; i <= in.Logs; i++ {
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: "fake", Data: fmt.Sprintf("log %d", i)}); err != nil {
			return nil, reportOut{}, fmt.Errorf("log %d: %w", i, err)
		}
		sent++
	}
	return nil, reportOut{Sent: sent}, nil
}

type logLaterIn struct {
	Ms    int    `json:"ms"`
	Level string `json:"level,omitempty"`
}

func logLater(_ context.Context, req *mcp.CallToolRequest, in logLaterIn) (*mcp.CallToolResult, struct{}, error) {
	level := mcp.LoggingLevel(in.Level)
	if level == "" {
		level = "info"
	}
	ss := req.Session
	time.AfterFunc(time.Duration(in.Ms)*time.Millisecond, func() {
		_ = ss.Log(context.Background(), &mcp.LoggingMessageParams{Level: level, Logger: "fake", Data: "later"})
	})
	return nil, struct{}{}, nil
}
