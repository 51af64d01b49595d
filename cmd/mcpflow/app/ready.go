package app

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpflow/mcpflow/actors/clock"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// The phases of an App, as /readyz reports them.
const (
	phaseStarting int32 = iota // Start has not finished
	phaseReady                 // Start finished, Shutdown not begun
	phaseStopping              // Shutdown has begun
)

// healthInterval is how often the health check runs when no service
// manager's watchdog sets the pace.
const healthInterval = 10 * time.Second

// lifecycle is what an App tells the outside about itself: /readyz, and,
// when a service manager started it (NOTIFY_SOCKET), READY=1 once it
// serves, WATCHDOG=1 while it is healthy and STOPPING=1 when it stops.
//
// Healthy means the check answers within half of the check interval: the
// supervisor, and through it the actor engine, answers a status request.
// The check runs from Serve until Shutdown begins, every watchdog interval
// (half of WATCHDOG_USEC) under a watchdog, else every healthInterval. A
// failed check withholds that WATCHDOG=1 (two in a row let the service
// manager's watchdog end the process) and makes /readyz answer 503 until
// a check passes.
type lifecycle struct {
	notify   *notifier
	watchdog time.Duration // how often WATCHDOG=1 is due; 0: no watchdog
	check    func(context.Context) error
	clock    clock.Clock // what the checks are paced by: the system's, a manual one in tests
	// store, when set, says why the store cannot write ("read_only",
	// "store_full"), or "" when it can: /readyz answers 503 with it.
	store func() string
	// sources, when set, is the health of the connections' sessions:
	// /readyz shows which fail (their ids and states, never a cause).
	sources func(context.Context) *protocol.HealthSources

	phase     atomic.Int32
	unhealthy atomic.Bool

	mu     sync.Mutex
	served bool
	stop   context.CancelFunc // ends the check loop
	done   chan struct{}      // closed once the check loop has ended
}

// newLifecycle is the lifecycle of an App that is starting, notifying the
// service manager getenv's NOTIFY_SOCKET names, if any; check is the
// health check.
func newLifecycle(getenv func(string) string, check func(context.Context) error) *lifecycle {
	n, err := notifierFromEnv(getenv)
	if err != nil {
		slog.Warn("service manager notifications off", "err", err)
	}
	l := &lifecycle{notify: n, check: check, clock: clock.System()}
	if n != nil {
		l.watchdog = watchdogFromEnv(getenv)
		slog.Info("notifying the service manager", "watchdog_interval", l.watchdog)
		l.tell("STATUS=starting: opening the store, recovering runs, warming up catalogs")
	}
	return l
}

// ready marks the end of Start's warm-up: /readyz answers 200.
func (l *lifecycle) ready() { l.phase.CompareAndSwap(phaseStarting, phaseReady) }

// serving tells the service manager the App serves on addr and starts the
// health checks, unless it already did or Shutdown has begun.
func (l *lifecycle) serving(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.served || l.phase.Load() == phaseStopping {
		return
	}
	l.served = true
	l.tell(notifyReady, "STATUS=serving on "+addr)
	ctx, cancel := context.WithCancel(context.Background())
	l.stop, l.done = cancel, make(chan struct{})
	go l.watch(ctx, l.done)
}

// stopping marks the beginning of Shutdown: /readyz answers 503, the
// health checks end, and the service manager hears STOPPING=1.
func (l *lifecycle) stopping() {
	l.mu.Lock()
	first := l.phase.Swap(phaseStopping) != phaseStopping
	stop, done := l.stop, l.done
	l.mu.Unlock()
	if !first {
		return
	}
	if stop != nil {
		stop()
		<-done
	}
	l.tell(notifyStopping, "STATUS=stopping")
}

// watch runs the health check until ctx ends, and pings the watchdog
// after each check that passes. It closes done when it returns.
func (l *lifecycle) watch(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	interval := cmp.Or(l.watchdog, healthInterval)
	due := make(chan struct{}, 1)
	tick := func() {
		select {
		case due <- struct{}{}:
		default:
		}
	}
	timer := l.clock.AfterFunc(interval, tick)
	defer func() { timer.Stop() }()
	var pingFailing bool
	for {
		select {
		case <-ctx.Done():
			return
		case <-due:
		}
		// The next check is due an interval after this one was, however
		// long this one takes.
		timer = l.clock.AfterFunc(interval, tick)
		cctx, cancel := context.WithTimeout(ctx, interval/2)
		err := l.check(cctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		l.judge(err, interval/2)
		if err != nil || l.watchdog == 0 {
			continue
		}
		switch err := l.notify.send(notifyWatchdog); {
		case err != nil && !pingFailing:
			slog.Warn("watchdog ping not sent", "err", err)
		case err == nil && pingFailing:
			slog.Info("watchdog pings sent again")
		}
		pingFailing = err != nil
	}
}

// judge records a health check's result, and says so when it changes.
func (l *lifecycle) judge(err error, within time.Duration) {
	was := l.unhealthy.Swap(err != nil)
	switch {
	case err != nil && !was:
		slog.Warn("health check failed: /readyz answers 503 and the watchdog is not pinged until one passes", "within", within, "err", err)
		l.tell("STATUS=unhealthy: the supervisor does not answer")
	case err == nil && was:
		slog.Info("health check passed again")
		l.tell("STATUS=serving")
	}
}

// tell sends states to the service manager, if any, and logs a failure.
func (l *lifecycle) tell(states ...string) {
	if err := l.notify.send(states...); err != nil {
		slog.Warn("service manager not notified", "state", states[0], "err", err)
	}
}

// serveReadyz answers /readyz: 200 {"status":"ready"} between the end of
// Start and the beginning of Shutdown while the health check passes and
// the store can write, else 503 with status starting, stopping,
// unhealthy, or what the store says (read_only, store_full). A ready
// server with a failing source says which: "sources": {"status":
// "degraded", "total", "failing", "detail": [{"source_id", "state"}]}; a
// failing source does not make the server unready (the others serve),
// and the causes are left to the authenticated workflow.health.
func (l *lifecycle) serveReadyz(w http.ResponseWriter, r *http.Request) {
	status, code := "ready", http.StatusOK
	switch l.phase.Load() {
	case phaseStarting:
		status, code = "starting", http.StatusServiceUnavailable
	case phaseStopping:
		status, code = "stopping", http.StatusServiceUnavailable
	default:
		if l.unhealthy.Load() {
			status, code = "unhealthy", http.StatusServiceUnavailable
		} else if why := l.storeStatus(); why != "" {
			status, code = why, http.StatusServiceUnavailable
		}
	}
	body := readyzBody{Status: status}
	if code == http.StatusOK && l.sources != nil {
		if h := l.sources(r.Context()); h != nil && h.Failing > 0 {
			body.Sources = &readyzSources{Status: h.Status, Total: h.Total, Failing: h.Failing, Detail: []readyzSource{}}
			for _, d := range h.Detail {
				body.Sources.Detail = append(body.Sources.Detail, readyzSource{SourceID: d.SourceID, State: d.State})
			}
		}
	}
	data, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// readyzBody is what /readyz answers; Sources only on a ready server
// with a failing source.
type readyzBody struct {
	Status  string         `json:"status"`
	Sources *readyzSources `json:"sources,omitempty"`
}

type readyzSources struct {
	Status  string         `json:"status"`
	Total   int            `json:"total"`
	Failing int            `json:"failing"`
	Detail  []readyzSource `json:"detail"`
}

type readyzSource struct {
	SourceID string `json:"source_id"`
	State    string `json:"state"`
}

// storeStatus is what l.store says, "" without one.
func (l *lifecycle) storeStatus() string {
	if l.store == nil {
		return ""
	}
	return l.store()
}

// healthy is the App's health check: the supervisor answers a status
// request within ctx's deadline.
func (a *App) healthy(ctx context.Context) error {
	if _, err := a.supervisor.Statuses(ctx); err != nil {
		return fmt.Errorf("supervisor status request: %w", err)
	}
	return nil
}
