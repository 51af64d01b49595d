// Package edge owns mcpflow's network edge: JSON-RPC 2.0 over WebSocket at
// /ws (one reader and one writer goroutine per connection, requests
// answered as they finish), the same methods over HTTP POST at /rpc, and
// /healthz. It decodes frames, checks params against the contract, bounds
// every connection, and hands each request to the service's method table.
package edge

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/service"
)

// Options bound the edge.
type Options struct {
	// MaxMessageBytes caps one WebSocket message or HTTP body.
	MaxMessageBytes int64
	// MaxBatch caps the entries of one batch.
	MaxBatch int
	// MaxInFlight caps concurrent requests per WebSocket connection;
	// beyond it a request is answered at once with -32000.
	MaxInFlight int
	// RequestTimeout bounds each request's handler.
	RequestTimeout time.Duration
	// WriteTimeout bounds each WebSocket write.
	WriteTimeout time.Duration
	// PingInterval is how often an idle WebSocket is pinged; a peer that
	// does not answer within PongWait is dropped.
	PingInterval, PongWait time.Duration
	// AllowedOrigins lists browser origins (scheme://host[:port]) allowed
	// besides the server's own host. Requests without Origin (non-browser
	// clients) are always allowed.
	AllowedOrigins []string
}

// DefaultOptions are the production bounds.
func DefaultOptions() Options {
	return Options{
		MaxMessageBytes: 4 << 20,
		MaxBatch:        jsonrpc.DefaultMaxBatch,
		MaxInFlight:     64,
		RequestTimeout:  5 * time.Minute,
		WriteTimeout:    10 * time.Second,
		PingInterval:    30 * time.Second,
		PongWait:        60 * time.Second,
	}
}

// withDefaults fills zero bounds from DefaultOptions: a zero bound would
// refuse every request or, for PingInterval, panic.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	orDefault(&o.MaxMessageBytes, d.MaxMessageBytes)
	orDefault(&o.MaxBatch, d.MaxBatch)
	orDefault(&o.MaxInFlight, d.MaxInFlight)
	orDefault(&o.RequestTimeout, d.RequestTimeout)
	orDefault(&o.WriteTimeout, d.WriteTimeout)
	orDefault(&o.PingInterval, d.PingInterval)
	orDefault(&o.PongWait, d.PongWait)
	return o
}

func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Server serves the workflow API.
type Server struct {
	methods  map[string]service.Handler
	contract *contract.Contract
	opts     Options
	// base is the parent of every WebSocket connection's context; Close
	// cancels it, since http.Server.Shutdown does not reach hijacked
	// connections.
	base  context.Context
	close context.CancelFunc
	// track counts requests and WebSocket connections for Shutdown.
	track tracker
}

// New returns a server of methods checked against c. Zero options take
// their defaults.
func New(methods map[string]service.Handler, c *contract.Contract, opts Options) *Server {
	opts = opts.withDefaults()
	served := make(map[string]service.Handler, len(methods)+1)
	for name, h := range methods {
		served[name] = h
	}
	// rpc.discover describes exactly the table the edge dispatches on.
	discover := sync.OnceValues(func() (any, error) {
		return contract.OpenRPC(slices.Collect(maps.Keys(methods)), contract.Info{Title: "mcpflow workflow API", Version: version()})
	})
	served[jsonrpc.MethodDiscover] = func(context.Context, json.RawMessage) (any, error) { return discover() }
	base, cancel := context.WithCancel(context.Background())
	return &Server{methods: served, contract: c, opts: opts, base: base, close: cancel}
}

// version is the binary's module version, "devel" when it has none.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// Close ends every WebSocket connection; in-flight handlers see their
// context cancelled. Shutdown does the same after a grace period, and
// waits.
func (s *Server) Close() { s.close() }

// Handler routes /ws, /rpc and /healthz.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ws", s.serveWebSocket)
	mux.HandleFunc("POST /rpc", s.serveHTTP)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	return mux
}

// checkOrigin allows non-browser clients, same-host pages and the
// configured origins; anything else would be cross-site WebSocket
// hijacking.
func (s *Server) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, allowed := range s.opts.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(allowed, "/"), origin) {
			return true
		}
	}
	return false
}
