package session

import (
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/mcpflow/mcpflow/actors/config"
)

// What a session's upstream reports during a call reaches the caller as
// these messages, while the call is in flight, when the call asked for
// them (CallTool.Reports, ReadResource.Reports): each carries the
// correlation id of the call's Reply, and goes to Reply's actor. A log
// message that is no call's is kept as the connection's (ConnectionLog,
// in Status.Logs). See docs/decisions.md, "Issue 28: progress and logs
// from upstream".

// CallProgress is a notifications/progress the upstream sent about a
// call in flight (the call's progressToken names it). Total is 0 when the
// upstream did not say.
type CallProgress struct {
	CorrelationID uint64
	Progress      float64
	Total         float64
	Message       string
}

// Correlation names the call the progress is about.
func (m CallProgress) Correlation() uint64 { return m.CorrelationID }

// CallLog is a notifications/message the session attributed to a call in
// flight: the only call in flight on the session when it came (a log
// message names no request).
type CallLog struct {
	CorrelationID uint64
	Log           LogMessage
}

// Correlation names the call the log message is attributed to.
func (m CallLog) Correlation() uint64 { return m.CorrelationID }

// LogMessage is one notifications/message: its level, logger and data,
// bounded (see MaxLogData).
type LogMessage struct {
	Level  string
	Logger string
	// Data is the message's data as JSON, at most MaxLogData bytes of it:
	// longer data is a JSON string holding the start of its JSON text,
	// with Truncated set.
	Data      json.RawMessage
	Truncated bool
}

// redacted is m with the connection's secrets taken out of its logger
// and data (an upstream may log its environment or its headers); the
// data stays JSON: when redacting broke it, it is the redacted text as a
// JSON string.
func (m LogMessage) redacted(conn config.Connection) LogMessage {
	m.Logger = Redact(conn, m.Logger)
	data := json.RawMessage(Redact(conn, string(m.Data)))
	if len(data) > 0 && !json.Valid(data) {
		data, _ = json.Marshal(string(data))
	}
	m.Data = data
	return m
}

// ConnectionLog is a log message the session kept as the connection's:
// it came while no call was in flight, or while several were (it could
// not be told whose it was; CallsInFlight says how many).
type ConnectionLog struct {
	At            time.Time
	Generation    int64
	CallsInFlight int
	Log           LogMessage
}

// MaxLogData bounds the data of a log message as mcpflow keeps it (in a
// step_log run event, or a connection's log), in bytes of JSON.
const MaxLogData = 2048

// MaxConnectionLogs is how many of a connection's own log messages its
// session actor keeps (the newest; Status.Logs).
const MaxConnectionLogs = 20

// BoundedData returns data as JSON of at most MaxLogData bytes, and
// whether it was cut.
func BoundedData(data any) (json.RawMessage, bool) {
	text, err := json.Marshal(data)
	if err != nil {
		text, _ = json.Marshal("unencodable log data: " + err.Error())
	}
	if len(text) <= MaxLogData {
		return text, false
	}
	cut := MaxLogData - 64 // room for the quoting of the cut text
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	quoted, _ := json.Marshal(string(text[:cut]) + "…")
	for len(quoted) > MaxLogData { // escapes took more room: cut more
		cut -= len(quoted) - MaxLogData
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		quoted, _ = json.Marshal(string(text[:cut]) + "…")
	}
	return quoted, true
}
