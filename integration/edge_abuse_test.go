package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/edge"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// heapBound is a generous ceiling for the in-use heap during an abuse
// test: issue 9 measured 550 MB and 900 MB for what these tests do.
const heapBound = 256 << 20

// startEdgeService starts mcpflow in-process, with no sources, with the
// config file's server.edge block set to limits (tightened timeouts keep
// the tests short).
func startEdgeService(t *testing.T, limits *config.Edge) (wsURL, rpcURL, addr string) {
	return startEdgeServiceOn(t, limits, nil)
}

// smallSendBuffers gives every accepted connection a small send buffer, so
// that the server backs up after little data to a client that does not
// read (the kernel would otherwise take megabytes first).
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(16 << 10)
	}
	return c, err
}

// startEdgeServiceOn is startEdgeService with the listener as wrap makes
// it (nil: as it is).
func startEdgeServiceOn(t *testing.T, limits *config.Edge, wrap func(net.Listener) net.Listener) (wsURL, rpcURL, addr string) {
	t.Helper()
	is.New(t).NoErr(limits.Validate())
	s := startServiceListening(t, func(opts *app.Options) { opts.Edge = opts.Edge.WithConfig(limits) }, wrap)
	addr = strings.TrimSuffix(strings.TrimPrefix(s.URL, "ws://"), "/ws")
	return s.URL, "http://" + addr + "/rpc", addr
}

// monitor samples the process's goroutines and in-use heap until stopped.
type monitor struct {
	baseline          int
	liveBase          uint64 // the live heap at the start, as the last GC marked it
	peakLive          atomic.Uint64
	peakG             atomic.Int64
	peakHeap          atomic.Uint64
	totalAlloc        uint64 // at the start
	stop              chan struct{}
	done              chan struct{}
	start             time.Time
	settledG, settled int
}

// watch records the baseline goroutine count (the service started, no
// client yet) and samples every 10 ms.
func watch() *monitor {
	runtime.GC() // the heap of earlier tests is not this one's
	m := &monitor{baseline: runtime.NumGoroutine(), stop: make(chan struct{}), done: make(chan struct{}), start: time.Now()}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.totalAlloc = ms.TotalAlloc
	m.liveBase = liveHeap()
	go func() {
		defer close(m.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			if g := int64(runtime.NumGoroutine()); g > m.peakG.Load() {
				m.peakG.Store(g)
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > m.peakHeap.Load() {
				m.peakHeap.Store(ms.HeapInuse)
			}
			if live := liveHeap(); live > m.peakLive.Load() {
				m.peakLive.Store(live)
			}
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// settle stops sampling, then waits for the goroutine count to be back at
// the baseline (polling with a deadline) and checks the heap bound.
func (m *monitor) settle(t *testing.T, what string) {
	t.Helper()
	is := is.New(t)
	close(m.stop)
	<-m.done
	g := runtime.NumGoroutine()
	if !poll.Until(20*time.Second, func() bool { g = runtime.NumGoroutine(); return g <= m.baseline }) {
		buf := make([]byte, 1<<20)
		t.Logf("goroutines left:\n%s", buf[:runtime.Stack(buf, true)])
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%s: goroutines baseline %d, peak %d, after %d (back within %s of the start); heap in use peak %.1f MiB (bound %d MiB), %.1f MiB allocated in all",
		what, m.baseline, m.peakG.Load(), g, time.Since(m.start).Round(time.Millisecond), float64(m.peakHeap.Load())/(1<<20), heapBound>>20,
		float64(ms.TotalAlloc-m.totalAlloc)/(1<<20))
	is.True(g <= m.baseline)               // every goroutine of the abuse returned
	is.True(m.peakHeap.Load() < heapBound) // memory stayed bounded
}

// dialRawSmall dials /ws with a small receive buffer, so that a client
// that does not read backs the server up quickly.
func dialRawSmall(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{NetDial: func(network, addr string) (net.Conn, error) {
		c, err := net.Dial(network, addr)
		if err == nil {
			_ = c.(*net.TCPConn).SetReadBuffer(8 << 10)
		}
		return c, err
	}}
	ws, resp, err := d.Dial(url, nil)
	is.New(t).NoErr(err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	return ws
}

// TestAbuseClientsThatNeverRead: 40 clients each ask for 100 large
// replies (the OpenRPC document, ~115 KB: 11 MB each, more than the socket
// buffers hold) and never read one. Each is read no further once its
// outbound queue is full, and dropped once a write outlasts the write
// timeout: the server gets back every goroutine while the clients still
// hold their sockets, and holds no more than its bounds allow meanwhile.
func TestAbuseClientsThatNeverRead(t *testing.T) {
	is := is.New(t)
	// Eight in-flight slots, not the default 64: a connection's bound is
	// its outbound bytes plus a reply per slot, and 40 clients' worth of
	// 64 slots (300 MB of replies at once) is more than this test needs
	// to show that the bound holds.
	limits := &config.Edge{WriteTimeoutMS: 300, MaxInFlight: 8}
	wsURL, _, _ := startEdgeServiceOn(t, limits, func(l net.Listener) net.Listener { return smallSendBuffers{l} })
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}`)
	reader := dialRaw(t, wsURL) // one reply read in full, for its size
	sendFrame(t, reader, string(frame))
	replyBytes := len(readFrame(t, reader))
	is.NoErr(reader.Close())
	m := watch()
	const clients, requests = 40, 100
	conns := make([]*websocket.Conn, clients)
	for i := range conns {
		conns[i] = dialRawSmall(t, wsURL)
	}
	for _, ws := range conns {
		for range requests { // small: the socket buffers take them all
			is.NoErr(ws.SetWriteDeadline(time.Now().Add(10 * time.Second)))
			if err := ws.WriteMessage(websocket.TextMessage, frame); err != nil {
				// Dropped already: on a loaded machine the server's write
				// timeout can pass before this loop reaches the client's
				// last request. Only the server's close may end the writes.
				is.True(errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE))
				break
			}
		}
	}
	m.settle(t, fmt.Sprintf("%d clients that never read, %d requests each", clients, requests)) // while the clients hold their sockets

	// What the server may hold per connection, from its bounds: replies up
	// to the outbound bound and the one that crosses it, a reply from each
	// in-flight slot (a reply is queued even past the bound, never
	// dropped), and the one being written; each counts twice, for the
	// encoder's buffer growing by doubling. As in the batch test, the live
	// heap is measured: the in-use one holds garbage as well.
	o := edge.DefaultOptions().WithConfig(limits)
	held := ceilDiv(int(o.MaxOutboundBytes), replyBytes) + o.MaxInFlight + 2
	bound := uint64(clients * 2 * held * replyBytes)
	grew := m.peakLive.Load() - min(m.liveBase, m.peakLive.Load())
	t.Logf("live heap grew by %.1f MiB at most; bound %.1f MiB (%d clients, %d replies of %.0f KiB each, twice)", float64(grew)/(1<<20), float64(bound)/(1<<20), clients, held, float64(replyBytes)/(1<<10))
	is.True(grew < bound) // each connection held no more than its bounds
	for _, ws := range conns {
		is.NoErr(ws.SetReadDeadline(time.Now().Add(10 * time.Second)))
		var err error
		for err == nil { // what the server wrote before it gave up, then the end
			_, _, err = ws.ReadMessage()
		}
		var ne net.Error
		is.True(!errors.As(err, &ne) || !ne.Timeout()) // closed by the server
	}
}

// TestAbuseSlowReaderFloodedWithBatches: a client sends 40 batches of 20
// rpc.discover (2.2 MB of replies each, 88 MB in all) as fast as the
// server takes them, and reads one message every 20 ms. The server reads
// no further than its outbound bound allows, so it holds a few batches'
// worth at most, not the 88 MB; every batch is answered in full.
func TestAbuseSlowReaderFloodedWithBatches(t *testing.T) {
	is := is.New(t)
	wsURL, _, _ := startEdgeService(t, nil)
	m := watch()
	ws := dialRaw(t, wsURL)
	const batches, size = 40, 20
	entries := make([]string, size)
	for i := range entries {
		entries[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"rpc.discover"}`, i)
	}
	frame := []byte("[" + strings.Join(entries, ",") + "]")
	writes := make(chan error, 1)
	go func() {
		for range batches {
			_ = ws.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if err := ws.WriteMessage(websocket.TextMessage, frame); err != nil {
				writes <- err
				return
			}
		}
		writes <- nil
	}()
	pace := time.NewTicker(20 * time.Millisecond) // the client's reading pace (a load profile)
	defer pace.Stop()
	var bytesRead, replyBytes int
	for range batches {
		<-pace.C
		is.NoErr(ws.SetReadDeadline(time.Now().Add(30 * time.Second)))
		_, data, err := ws.ReadMessage()
		is.NoErr(err)
		is.True(data[0] == '[')                                                     // a batch reply
		is.Equal(bytes.Count(data, []byte(`{"jsonrpc":"2.0","id":`)), size)         // every entry answered
		is.Equal(bytes.Count(data, []byte(`{"jsonrpc":"2.0","id":0,"result":`)), 1) // with a result
		bytesRead += len(data)
		replyBytes = max(replyBytes, len(data))
	}
	is.NoErr(<-writes)
	is.NoErr(ws.Close())
	t.Logf("%d batches of %d entries: %.1f MiB of replies, read one message per 20 ms", batches, size, float64(bytesRead)/(1<<20))
	m.settle(t, "slow reader flooded with batches")

	// What the server may hold, from its bounds: replies up to the
	// outbound bound (and the one that crosses it), the batches running in
	// the in-flight slots, and the reply being written; and what this
	// client holds, the reply it reads. Each counts twice: a running batch
	// holds its entries' results and their encoding at once, and a read
	// buffer grows by doubling. The live heap (what a collection keeps)
	// is measured, not the in-use heap, which holds garbage as well.
	// Reading ahead of the client would hold all 40 replies, 88 MB (the
	// live heap then grows by 90 MB or more).
	o := edge.DefaultOptions()
	held := ceilDiv(int(o.MaxOutboundBytes), replyBytes) + ceilDiv(o.MaxInFlight, size) + 2
	bound := 2 * uint64(held*replyBytes)
	grew := m.peakLive.Load() - min(m.liveBase, m.peakLive.Load())
	t.Logf("live heap grew by %.1f MiB at most; bound %.1f MiB (%d replies of %.1f MiB, twice)", float64(grew)/(1<<20), float64(bound)/(1<<20), held, float64(replyBytes)/(1<<20))
	is.True(grew < bound) // a few batches' worth, not the 88 MB
}

// liveHeap is the heap the last GC found live (runtime/metrics
// /gc/heap/live:bytes): garbage not yet collected is not in it.
func liveHeap() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// ceilDiv is a/b rounded up.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// TestAbusePipelinedRequests: one client writes 1,000 requests without
// waiting, then reads 1,000 replies. Requests beyond the 64 in-flight
// slots wait for one: none is refused.
func TestAbusePipelinedRequests(t *testing.T) {
	is := is.New(t)
	wsURL, _, _ := startEdgeService(t, nil)
	m := watch()
	ws := dialRaw(t, wsURL)
	const n = 1000
	start := time.Now()
	writes := make(chan error, 1)
	go func() {
		for i := range n {
			_ = ws.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if err := ws.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"workflow.health"}`, i)); err != nil {
				writes <- err
				return
			}
		}
		writes <- nil
	}()
	seen := make(map[string]bool, n)
	for range n {
		is.NoErr(ws.SetReadDeadline(time.Now().Add(30 * time.Second)))
		_, data, err := ws.ReadMessage()
		is.NoErr(err)
		var r struct {
			ID    json.RawMessage `json:"id"`
			Error *struct{ Code int }
		}
		is.NoErr(json.Unmarshal(data, &r))
		is.True(r.Error == nil) // no -32000: requests wait for a slot
		seen[string(r.ID)] = true
	}
	is.NoErr(<-writes)
	is.Equal(len(seen), n)
	is.NoErr(ws.Close())
	t.Logf("%d pipelined requests answered in %s", n, time.Since(start).Round(time.Millisecond))
	m.settle(t, "1,000 pipelined requests")
}

// slowBodyHead is the start of a slow-body POST's body, of
// slowBodyLength bytes in all; slowBodyRest completes it as a request.
const (
	slowBodyLength = 1000
	slowBodyHead   = `{"jsonrpc":"2.0",`
)

var slowBodyRest = `"id":1,"method":"no.such.method"` + strings.Repeat(" ", slowBodyLength-len(slowBodyHead)-len(`"id":1,"method":"no.such.method"`)-1) + `}`

// slowBodyPOSTs opens n connections to addr, each sending a POST to /rpc
// with its headers and part of its body, then stalling. Each connection's
// answer goes to answers, as the HTTP status (0: none, the connection
// ended first), when it comes; it waits at most 20 s.
func slowBodyPOSTs(t *testing.T, addr string, n int) (conns []net.Conn, answers <-chan int) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	out := make(chan int, n)
	conns = make([]net.Conn, n)
	for i := range n {
		c, err := net.Dial("tcp", addr)
		is.NoErr(err)
		conns[i] = c
		go func() {
			status := 0
			defer func() { out <- status }()
			defer func() { _ = c.SetDeadline(time.Time{}) }()
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			if _, err := io.WriteString(c, "POST /rpc HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(slowBodyLength)+"\r\n\r\n"+slowBodyHead); err != nil {
				return
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return
			}
			_ = resp.Body.Close()
			status = resp.StatusCode
		}()
	}
	return conns, out
}

// TestAbuseSlowBodyPOSTs: 300 POSTs to /rpc send their headers and part of
// their body, then stall. Those beyond the per-client cap (128) get 429 at
// once, the rest 408 once the body timeout passes; the server holds none
// of them after, though the clients keep their sockets open.
func TestAbuseSlowBodyPOSTs(t *testing.T) {
	is := is.New(t)
	_, _, addr := startEdgeService(t, &config.Edge{BodyTimeoutMS: 500})
	m := watch()
	const n = 300
	conns, answers := slowBodyPOSTs(t, addr, n)
	count := map[int]int{}
	for range n {
		count[<-answers]++
	}
	t.Logf("%d slow-body POSTs: %d answered 408 (body timeout), %d answered 429 (per-client cap), %d unanswered",
		n, count[http.StatusRequestTimeout], count[http.StatusTooManyRequests], count[0])
	is.Equal(count[http.StatusRequestTimeout]+count[http.StatusTooManyRequests], n) // every one answered
	is.True(count[http.StatusTooManyRequests] > 0)                                  // some beyond the cap (TestRPCRefusesWhatIsBeyondThePerClientCap: how many)
	m.settle(t, "300 slow-body POSTs")                                              // while the clients still hold their sockets
	for _, c := range conns {
		_ = c.Close()
	}
}

// TestRPCRefusesWhatIsBeyondThePerClientCap: of 300 POSTs to /rpc from one
// address that stall in their body, the 172 beyond the per-client cap
// (128) are answered 429 at once, while the 128 within it are held: the
// body timeout (a minute) is far beyond the test, so no slot frees
// meanwhile. Once the 429s are in, the stalled bodies are completed, and
// exactly the 128 held are served.
func TestRPCRefusesWhatIsBeyondThePerClientCap(t *testing.T) {
	is := is.New(t)
	const n, limit = 300, 128 // limit: edge.DefaultOptions().MaxConnsPerClient
	_, _, addr := startEdgeService(t, &config.Edge{BodyTimeoutMS: 60_000})
	conns, answers := slowBodyPOSTs(t, addr, n)
	count := map[int]int{}
	for count[http.StatusTooManyRequests] < n-limit {
		select {
		case status := <-answers:
			is.Equal(status, http.StatusTooManyRequests) // none but those refused is answered while the bodies stall
			count[status]++
		case <-time.After(10 * time.Second):
			t.Logf("only %d answered 429 within 10 s", count[http.StatusTooManyRequests])
			is.Fail() // those beyond the cap are refused at once
		}
	}
	for _, c := range conns { // the rest of each body; the refused ones are over
		_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.WriteString(c, slowBodyRest)
	}
	for range limit {
		count[<-answers]++
	}
	t.Logf("%d slow-body POSTs from one address: %v", n, count)
	is.Equal(count, map[int]int{http.StatusTooManyRequests: n - limit, http.StatusOK: limit}) // exactly the cap's worth held, then served
	for _, c := range conns {
		_ = c.Close()
	}
}

// TestWebSocketRefusesWhatIsBeyondThePerClientCap: with the per-client
// cap raised to 500, 500 WebSocket connections from one address are held
// and the 501st is refused with 429. The pings are a minute apart, so no
// connection is dropped meanwhile (TestAbuseIdleConnections drops them
// after a second: on a loaded machine its 500 dials took longer, and the
// 501st found room).
func TestWebSocketRefusesWhatIsBeyondThePerClientCap(t *testing.T) {
	is := is.New(t)
	const n = 500
	wsURL, _, _ := startEdgeService(t, &config.Edge{MaxConnectionsPerClient: n, PingIntervalMS: 60_000})
	for range n {
		ws, resp, err := websocket.DefaultDialer.Dial(wsURL, nil)
		is.NoErr(err) // within the cap
		_ = resp.Body.Close()
		t.Cleanup(func() { _ = ws.Close() })
	}
	_, resp, err := websocket.DefaultDialer.Dial(wsURL, nil)
	is.Equal(err, websocket.ErrBadHandshake)
	is.Equal(resp.StatusCode, http.StatusTooManyRequests) // one beyond the cap
	_ = resp.Body.Close()
}

// TestAbuseIdleConnections: 500 WebSocket connections that send nothing
// and never answer a ping (with the per-client cap raised to 500;
// TestWebSocketRefusesWhatIsBeyondThePerClientCap refuses the 501st). The
// server holds two goroutines per connection, and drops them all after the
// ping interval plus the pong timeout, while the clients still hold their
// sockets.
func TestAbuseIdleConnections(t *testing.T) {
	is := is.New(t)
	wsURL, _, _ := startEdgeService(t, &config.Edge{MaxConnectionsPerClient: 500, PingIntervalMS: 500, PongTimeoutMS: 500})
	m := watch()
	const n = 500
	conns := make([]*websocket.Conn, 0, n)
	for range n {
		ws, resp, err := websocket.DefaultDialer.Dial(wsURL, nil)
		is.NoErr(err)
		_ = resp.Body.Close()
		conns = append(conns, ws)
	}
	held := runtime.NumGoroutine() - m.baseline
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d idle connections held: %d goroutines (%.1f per connection), heap in use %.1f MiB",
		n, held, float64(held)/n, float64(ms.HeapInuse)/(1<<20))
	m.settle(t, "500 idle connections") // dropped for not answering pings
	for _, ws := range conns {
		_ = ws.Close()
	}
}
