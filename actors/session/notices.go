package session

import (
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/actors/reply"
)

// Bounds of the notifications a session holds before its actor takes
// them: the latest progress of up to maxPendingTokens tokens, and up to
// maxPendingLogs log messages. Past them a notification is dropped and
// counted (metrics.NoticeDropped). The actor takes them all at once,
// woken by one message however many came, so that a flood from an
// upstream grows neither the actor's inbox nor this buffer.
const (
	maxPendingTokens = 128
	maxPendingLogs   = 256
)

// progressTokenPrefix begins the progressToken of every call and read
// mcpflow sends; its run number (unique within the session actor) ends it.
const progressTokenPrefix = "mcpflow-"

// progressToken is the token of the work in flight numbered run.
func progressToken(run uint64) string {
	return progressTokenPrefix + strconv.FormatUint(run, 10)
}

// tokenRun is the run number a progress token names, if it is one of
// mcpflow's.
func tokenRun(token any) (uint64, bool) {
	s, ok := token.(string)
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutPrefix(s, progressTokenPrefix)
	if !ok {
		return 0, false
	}
	run, err := strconv.ParseUint(digits, 10, 64)
	return run, err == nil
}

// notices is where the reader of a session's messages leaves its
// notifications/progress and notifications/message for the actor
// (noticeread.go).
type notices struct {
	mu       sync.Mutex
	progress map[string]pendingProgress // the latest, by token
	order    []string                   // the tokens of progress, in order of arrival
	logs     []pendingLog
	// dropped and coalesced count, by kind, what the bounds left out and
	// what a later progress of the same token replaced.
	dropped, coalesced map[string]int
	woken              bool
	wake               func()
}

type pendingProgress struct {
	attempt int
	token   any
	params  mcp.ProgressNotificationParams
}

type pendingLog struct {
	attempt int
	at      time.Time
	log     LogMessage
}

// noticeBatch is what the actor takes from notices at once.
type noticeBatch struct {
	progress           []pendingProgress
	logs               []pendingLog
	dropped, coalesced map[string]int
}

// Notification kinds, the kind label of the session's metrics.
const (
	noticeProgress = "progress"
	noticeLog      = "log"
)

func newNotices(wake func()) *notices {
	return &notices{progress: map[string]pendingProgress{}, dropped: map[string]int{}, coalesced: map[string]int{}, wake: wake}
}

// addProgress keeps p as its token's latest progress.
func (n *notices) addProgress(attempt int, p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	key := tokenKey(p.ProgressToken)
	n.mu.Lock()
	defer n.mu.Unlock()
	_, seen := n.progress[key]
	switch {
	case seen:
		n.coalesced[noticeProgress]++
	case len(n.order) >= maxPendingTokens:
		n.dropped[noticeProgress]++
		return
	default:
		n.order = append(n.order, key)
	}
	c := *p
	c.Meta = nil
	n.progress[key] = pendingProgress{attempt: attempt, token: p.ProgressToken, params: c}
	n.woke()
}

// addLog keeps a log message, its data bounded (off the actor's inbox).
func (n *notices) addLog(attempt int, p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	data, cut := BoundedData(p.Data)
	l := pendingLog{attempt: attempt, at: time.Now(), log: LogMessage{Level: string(p.Level), Logger: p.Logger, Data: data, Truncated: cut}}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.logs) >= maxPendingLogs {
		n.dropped[noticeLog]++
		return
	}
	n.logs = append(n.logs, l)
	n.woke()
}

// malformed counts a notification of kind whose params could not be
// read as dropped.
func (n *notices) malformed(kind string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.dropped[kind]++
	n.woke()
}

// woke wakes the actor unless it was woken already and has not taken
// the notices since. n.mu is held.
func (n *notices) woke() {
	if !n.woken {
		n.woken = true
		n.wake()
	}
}

// take hands everything pending to the actor.
func (n *notices) take() noticeBatch {
	n.mu.Lock()
	defer n.mu.Unlock()
	b := noticeBatch{logs: n.logs, dropped: n.dropped, coalesced: n.coalesced}
	for _, key := range n.order {
		b.progress = append(b.progress, n.progress[key])
	}
	clear(n.progress)
	n.order, n.logs, n.woken = nil, nil, false
	n.dropped, n.coalesced = map[string]int{}, map[string]int{}
	return b
}

// tokenKey is a progress token as a map key: a string token as it is, a
// number (which JSON decodes as float64) by its JSON text.
func tokenKey(token any) string {
	if s, ok := token.(string); ok {
		return "s" + s
	}
	text, _ := json.Marshal(token)
	return "n" + string(text)
}

// noticed wakes the actor to take its notices.
type noticed struct{}

// onNoticed takes the pending notices: each progress goes to the caller
// of the call its token names, each log message to the call in flight if
// it is the only one, else to the connection's log.
func (a *Actor) onNoticed() {
	b := a.notices.take()
	m, conn := a.opts.Metrics, a.conn.ID
	for kind, n := range b.dropped {
		m.UpstreamNotice(conn, kind, metrics.NoticeDropped, n)
		slog.Warn("upstream notifications dropped, past the session's pending bound or malformed", "connection", conn, "kind", kind, "dropped", n)
	}
	for kind, n := range b.coalesced {
		m.UpstreamNotice(conn, kind, metrics.NoticeCoalesced, n)
	}
	for _, p := range b.progress {
		m.UpstreamNotice(conn, noticeProgress, a.forwardProgress(p), 1)
	}
	for _, l := range b.logs {
		m.UpstreamNotice(conn, noticeLog, a.forwardLog(l), 1)
	}
}

// forwardProgress hands p to the caller of the call it is about, and
// says what became of it.
func (a *Actor) forwardProgress(p pendingProgress) string {
	run, ok := tokenRun(p.token)
	f := a.running[run]
	if !ok || f == nil || f.attempt != p.attempt || (f.w.call == nil && f.w.read == nil) {
		slog.Debug("upstream progress about no call in flight", "connection", a.conn.ID, "token", p.token)
		return metrics.NoticeUnknownCall
	}
	if !f.w.reports() {
		return metrics.NoticeUnfollowed
	}
	to := f.w.replyTo()
	reply.Send(a.engine, to, CallProgress{CorrelationID: to.Correlation, Progress: p.params.Progress, Total: p.params.Total, Message: Redact(a.conn, p.params.Message)})
	return metrics.NoticeForwarded
}

// forwardLog hands l to the only call in flight on its session, or keeps
// it as the connection's, and says what became of it.
func (a *Actor) forwardLog(l pendingLog) string {
	l.log = l.log.redacted(a.conn)
	var only *inflight
	calls := 0
	for _, f := range a.running {
		if f.attempt == l.attempt && (f.w.call != nil || f.w.read != nil) {
			only = f
			calls++
		}
	}
	if calls == 1 {
		if !only.w.reports() {
			return metrics.NoticeUnfollowed
		}
		to := only.w.replyTo()
		reply.Send(a.engine, to, CallLog{CorrelationID: to.Correlation, Log: l.log})
		return metrics.NoticeForwarded
	}
	gen := a.generation
	if l.attempt != a.attempt {
		gen = 0 // an earlier session's: its generation is not known here
	}
	a.logs = append(a.logs, ConnectionLog{At: l.at, Generation: gen, CallsInFlight: calls, Log: l.log})
	if drop := len(a.logs) - MaxConnectionLogs; drop > 0 {
		a.logs = append(a.logs[:0:0], a.logs[drop:]...)
	}
	return metrics.NoticeConnectionLog
}
