package fakes

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WithReports gives s tools that report while they run, and returns s:
//
//   - report {progress, logs, level?, pause_ms?} → {sent}: sends progress
//     notifications/progress about its own call (progress i of total
//     `progress`, message "step i"), then `logs` notifications/message at
//     level (default "info", data "log i"), then waits pause_ms and
//     answers. A flood is report with large counts.
//   - log_later {ms, level?} → {}: answers at once, then, ms
//     milliseconds later, sends one log message (data "later"): a log
//     outside any call.
//
// With logLevel set, s acts as if each client had sent logging/setLevel
// with it once initialized (go-sdk's server sends no log message until
// then); "" leaves that to the client.
func WithReports(s *mcp.Server, logLevel mcp.LoggingLevel) *mcp.Server {
	mcp.AddTool(s, &mcp.Tool{Name: "report", Description: "Send progress and log notifications about this call, then answer."}, report)
	mcp.AddTool(s, &mcp.Tool{Name: "log_later", Description: "Answer, then send a log message ms milliseconds later."}, logLater)
	if logLevel != "" {
		s.AddReceivingMiddleware(presetLogLevel(logLevel))
	}
	return s
}

type reportIn struct {
	Progress int    `json:"progress,omitempty"`
	Logs     int    `json:"logs,omitempty"`
	Level    string `json:"level,omitempty"`
	PauseMs  int    `json:"pause_ms,omitempty"`
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
	if in.PauseMs > 0 {
		select {
		case <-time.After(time.Duration(in.PauseMs) * time.Millisecond):
		case <-ctx.Done():
			return nil, reportOut{}, ctx.Err()
		}
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

// presetLogLevel sets each session's log level to level once it is
// initialized, as a logging/setLevel from the client would.
func presetLogLevel(level mcp.LoggingLevel) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && method == "notifications/initialized" {
				_, _ = next(ctx, "logging/setLevel", &mcp.ServerRequest[*mcp.SetLoggingLevelParams]{Session: ss, Params: &mcp.SetLoggingLevelParams{Level: level}})
			}
			return res, err
		}
	}
}
