// Package edge owns mcpflow's network edge: JSON-RPC 2.0 over WebSocket at
// /ws (one reader and one writer goroutine per connection, requests
// answered as they finish), the same methods over HTTP POST at /rpc, and
// /healthz. It decodes frames, checks params against the contract, bounds
// every connection and each method's concurrent calls (rpc.Method's
// MaxConcurrent), and hands each request to the method table it is given.
// It knows no method by name but rpc.discover, which it serves itself.
package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/metrics"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/rpc"
)

// Options bound the edge; docs/edge.md explains each bound and its
// default. A zero bound takes its default.
type Options struct {
	// MaxMessageBytes caps one WebSocket message (beyond it: close 1009)
	// or HTTP body (beyond it: 413).
	MaxMessageBytes int64
	// MaxBatch caps the entries of one batch (beyond it: one -32600).
	MaxBatch int
	// MaxInFlight caps the requests running at once per WebSocket
	// connection, and per client address over /rpc. Every request takes a
	// slot, batch entries included; one that finds none free waits for
	// one until its deadline (RequestTimeout after its frame arrived), and
	// is answered -32000 only if none frees by then. While a WebSocket
	// request waits, its connection is not read.
	MaxInFlight int
	// MaxSubscriptions caps the subscriptions per WebSocket connection.
	MaxSubscriptions int
	// MaxConnsPerClient caps what one client address holds at once:
	// WebSocket connections plus /rpc requests being served. Beyond it the
	// upgrade or the POST is refused with HTTP 429 and a -32000 body.
	MaxConnsPerClient int
	// MaxOutboundMessages and MaxOutboundBytes bound what one WebSocket
	// connection has produced and not yet written: replies queued for the
	// writer, and the encoded answers of batches still running. While
	// either bound is reached the connection is not read (backpressure),
	// so a client that reads slowly slows itself down; one that stops
	// reading is dropped after WriteTimeout.
	MaxOutboundMessages int
	MaxOutboundBytes    int64
	// RequestTimeout bounds each request from the arrival of its frame:
	// the wait for an in-flight slot and the handler.
	RequestTimeout time.Duration
	// WriteTimeout bounds each WebSocket write and each /rpc reply write;
	// a peer that takes longer is dropped.
	WriteTimeout time.Duration
	// PingInterval is how often the WebSocket writer pings; a peer from
	// which nothing (a message or a pong) arrives for PingInterval plus
	// PongWait is dropped.
	PingInterval, PongWait time.Duration
	// ReadHeaderTimeout bounds reading an HTTP request's headers (a setting
	// of the http.Server, which its owner takes from Options) and
	// BodyTimeout reading an /rpc body (beyond it: 408).
	ReadHeaderTimeout, BodyTimeout time.Duration
	// RequestContext, when set, is called for each request of a method
	// that pushes (rpc.Method.Pushes) that arrives over WebSocket, before
	// its handler runs: it returns the handler's
	// context (derived from ctx, which carries the connection: ConnFrom)
	// and a release, called once the request's reply is queued on the
	// connection, or once none will be (a notification, a request cut
	// short); in a batch, once the batch's reply is. It lets a handler
	// start pushing notifications (c.Notify) only after the reply that
	// announces them.
	RequestContext func(ctx context.Context, c *Conn) (context.Context, func())
	// Guard authenticates bearer tokens; nil (or one without tokens)
	// serves every request as access.Anonymous.
	Guard *access.Guard
	// Gate checks each request's Host and Origin; nil accepts loopback
	// names and origins only.
	Gate *access.Gate
	// Metrics counts requests and WebSocket connections, and is served
	// at /metrics; nil serves no /metrics and counts nothing.
	Metrics *metrics.Metrics
}

// DefaultOptions are the production bounds.
func DefaultOptions() Options {
	return Options{
		MaxMessageBytes:     4 << 20,
		MaxBatch:            jsonrpc.DefaultMaxBatch,
		MaxInFlight:         64,
		MaxSubscriptions:    32,
		MaxConnsPerClient:   128,
		MaxOutboundMessages: 128,
		MaxOutboundBytes:    1 << 20,
		RequestTimeout:      5 * time.Minute,
		WriteTimeout:        10 * time.Second,
		PingInterval:        30 * time.Second,
		PongWait:            30 * time.Second,
		ReadHeaderTimeout:   10 * time.Second,
		BodyTimeout:         30 * time.Second,
	}
}

// withDefaults fills zero bounds from DefaultOptions: a zero bound would
// refuse every request or, for PingInterval, panic.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Guard == nil {
		o.Guard = access.NewGuard(nil)
	}
	if o.Gate == nil {
		o.Gate = access.NewGate(nil, nil)
	}
	orDefault(&o.MaxMessageBytes, d.MaxMessageBytes)
	orDefault(&o.MaxBatch, d.MaxBatch)
	orDefault(&o.MaxInFlight, d.MaxInFlight)
	orDefault(&o.MaxSubscriptions, d.MaxSubscriptions)
	orDefault(&o.MaxConnsPerClient, d.MaxConnsPerClient)
	orDefault(&o.MaxOutboundMessages, d.MaxOutboundMessages)
	orDefault(&o.MaxOutboundBytes, d.MaxOutboundBytes)
	orDefault(&o.RequestTimeout, d.RequestTimeout)
	orDefault(&o.WriteTimeout, d.WriteTimeout)
	orDefault(&o.PingInterval, d.PingInterval)
	orDefault(&o.PongWait, d.PongWait)
	orDefault(&o.ReadHeaderTimeout, d.ReadHeaderTimeout)
	orDefault(&o.BodyTimeout, d.BodyTimeout)
	return o
}

func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// WithConfig returns o with the bounds a config file's server.edge block
// sets; a nil block or a zero field keeps o's value. Two settings of the
// block are not the edge's own: max_concurrent_runs is the bound of the
// workflow.runs.start entry of the method table (the service sets it),
// and subscription_buffer the live event hub's.
func (o Options) WithConfig(e *config.Edge) Options {
	if e == nil {
		return o
	}
	set := func(v int, dst *int) {
		if v > 0 {
			*dst = v
		}
	}
	ms := func(v int, dst *time.Duration) {
		if v > 0 {
			*dst = time.Duration(v) * time.Millisecond
		}
	}
	if e.MaxMessageBytes > 0 {
		o.MaxMessageBytes = int64(e.MaxMessageBytes)
	}
	if e.MaxOutboundBytes > 0 {
		o.MaxOutboundBytes = e.MaxOutboundBytes
	}
	set(e.MaxBatch, &o.MaxBatch)
	set(e.MaxInFlight, &o.MaxInFlight)
	set(e.MaxSubscriptions, &o.MaxSubscriptions)
	set(e.MaxConnectionsPerClient, &o.MaxConnsPerClient)
	set(e.MaxOutboundMessages, &o.MaxOutboundMessages)
	ms(e.RequestTimeoutMS, &o.RequestTimeout)
	ms(e.WriteTimeoutMS, &o.WriteTimeout)
	ms(e.PingIntervalMS, &o.PingInterval)
	ms(e.PongTimeoutMS, &o.PongWait)
	ms(e.ReadHeaderTimeoutMS, &o.ReadHeaderTimeout)
	ms(e.BodyTimeoutMS, &o.BodyTimeout)
	return o
}

// Server serves the workflow API.
type Server struct {
	methods  map[string]served
	contract *contract.Contract
	opts     Options
	// base is the parent of every WebSocket connection's context; Close
	// cancels it, since http.Server.Shutdown does not reach hijacked
	// connections.
	base  context.Context
	close context.CancelFunc
	// track counts requests and WebSocket connections for Shutdown.
	track tracker
	// clients holds what each client address has open, for
	// MaxConnsPerClient and the /rpc in-flight slots.
	clients clients
	// faces are the handlers Mount added, by path pattern.
	faces map[string]http.Handler
	// signedFaces are the handlers MountSigned added, by path pattern.
	signedFaces map[string]http.Handler
}

// New returns a server of methods checked against c. Zero options take
// their defaults. A method with a MaxConcurrent gets that many places,
// shared by every caller of the server.
func New(methods map[string]rpc.Method, c *contract.Contract, opts Options) *Server {
	opts = opts.withDefaults()
	table := make(map[string]served, len(methods)+1)
	for name, m := range methods {
		table[name] = serve(m)
	}
	// rpc.discover describes exactly the table the edge dispatches on. The
	// document (~100 KB) is encoded once: every call then only copies it.
	discover := sync.OnceValues(func() (any, error) {
		doc, err := contract.OpenRPC(slices.Collect(maps.Keys(methods)), contract.Info{Title: "mcpflow workflow API", Version: Version()})
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as every other result
		if err := enc.Encode(doc); err != nil {
			return nil, fmt.Errorf("encode the OpenRPC document: %w", err)
		}
		return jsonrpc.Encoded(bytes.TrimSpace(buf.Bytes())), nil
	})
	table[jsonrpc.MethodDiscover] = serve(rpc.Method{Scope: access.Read, Handler: func(context.Context, json.RawMessage) (any, error) { return discover() }})
	base, cancel := context.WithCancel(context.Background())
	return &Server{
		methods: table, contract: c, opts: opts, base: base, close: cancel,
		clients: clients{limit: opts.MaxConnsPerClient, inFlight: opts.MaxInFlight, byAddr: map[string]*client{}},
	}
}

// Options returns the bounds the server applies, defaults filled in.
func (s *Server) Options() Options { return s.opts }

// Version is the binary's module version, "devel" when it has none.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// Close ends every WebSocket connection; in-flight handlers see their
// context cancelled. Shutdown does the same after a grace period, and
// waits.
func (s *Server) Close() { s.close() }

// Mount adds a face, another way in to the same method table, at pattern
// ("/mcp"), before Handler is called. It is served under /ws's admission
// (Host, Origin, token, the per-client bound), with the caller in its
// request's context (access.PrincipalFrom), and reaches the methods
// through Local.
func (s *Server) Mount(pattern string, face http.Handler) {
	if s.faces == nil {
		s.faces = map[string]http.Handler{}
	}
	s.faces[pattern] = face
}

// MountSigned adds a face whose requests are their own credential (the
// signed webhooks at "POST /hooks/{id}"), before Handler is called. It is
// served as Mount's faces are, without the bearer token: the face checks
// each request itself, and the caller in its context may call nothing.
func (s *Server) MountSigned(pattern string, face http.Handler) {
	if s.signedFaces == nil {
		s.signedFaces = map[string]http.Handler{}
	}
	s.signedFaces[pattern] = face
}

// Handler routes /ws, /rpc, /healthz, the mounted faces and, with
// Metrics, /metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ws", s.serveWebSocket)
	mux.HandleFunc("POST /rpc", s.serveHTTP)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	if s.opts.Metrics != nil {
		mux.HandleFunc("GET "+metricsPath, s.serveMetrics(s.opts.Metrics.Handler()))
	}
	for pattern, face := range s.faces {
		mux.Handle(pattern, s.admitted(face))
	}
	for pattern, face := range s.signedFaces {
		mux.Handle(pattern, s.signed(face))
	}
	return mux
}
