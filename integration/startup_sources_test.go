package integration

// A start with many sources serves at once: the real binary, on a store
// that holds every source's catalog, with most sources on an upstream that
// never answers. Nothing waits for their connects; the stored catalogs are
// served; the background refresh of the stale ones connects only a few
// sources at a time; a deployment on a source that answers runs.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/catalog"
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
)

const (
	// hungSources are the sources whose upstream never answers.
	hungSources = 150
	// startRefreshes bounds the catalogs listed at once in the test.
	startRefreshes = 4
)

func TestAStartWithManyHungSourcesServesTheirStoredCatalogsAtOnce(t *testing.T) {
	c := startWithHungSources(t, true)
	// A hung source's catalog is the stored one, served without it.
	listed, err := c.ListCapabilities(testContext(t), p.ListCapabilitiesParams{SourceID: ptr("hung042.default")})
	is := is.New(t)
	is.NoErr(err)
	is.Equal(len(listed.Capabilities), 1)
	is.Equal(listed.Capabilities[0].Name, "hung042.default.lookup")
}

func TestAStartWithManyNewHungSourcesServesAtOnce(t *testing.T) {
	// More new sources than a start waits for: it lists their catalogs in
	// the background, a few at a time, and serves meanwhile.
	startWithHungSources(t, false)
}

// startWithHungSources serves hungSources sources on an upstream that
// never answers and one (good.default, fakemcp over stdio) that does,
// their catalogs stored (stale for the hung ones) when stored says so,
// and checks that mcpflow serves at once: it is ready, a deployment on
// good.default runs, and the hung sources are connected a few at a time.
func startWithHungSources(t *testing.T, stored bool) *client.Client {
	t.Helper()
	is := is.New(t)
	hung := hungUpstream(t)
	dir := t.TempDir()
	sources := []config.Connection{stdioSource("good.default", fakeMCP)}
	good := toolCatalog("good.default", "counter", time.Now())
	good.Tools[0].OutputSchema = map[string]any{"type": "object", "properties": map[string]any{"count": map[string]any{"type": "integer"}}, "required": []any{"count"}}
	snaps := []catalog.Snapshot{good}
	stale := time.Now().Add(-time.Hour)
	for i := range hungSources {
		id := fmt.Sprintf("hung%03d.default", i)
		sources = append(sources, config.Connection{Kind: "mcp", ID: id, Transport: config.Transport{Kind: config.TransportHTTP, URL: hung.URL + "/mcp"}})
		if stored {
			snaps = append(snaps, toolCatalog(id, "lookup", stale)) // stale: refreshed in the background
		}
	}
	storeCatalogs(t, filepath.Join(dir, "store"), snaps)
	// A warm-up of an hour: a start that waited for the hung sources'
	// catalogs would not serve within startProcess's 20 s, and neither
	// would one that waited for their connects (30 s each, 4 at a time).
	cfgPath := writeServerConfig(t, dir, config.Server{Sources: sources, Supervision: &config.Supervision{MaxConcurrentRefreshes: startRefreshes, WarmUpMS: ptr(int(time.Hour / time.Millisecond))}})

	began := time.Now()
	pr := startProcess(t, cfgPath, "serve.log", "--run-wait", "30s") // fails unless it serves within 20 s
	t.Logf("serving %s after the exec", time.Since(began).Round(time.Millisecond))
	code, body, err := readyz(pr.httpBase())
	is.NoErr(err)
	if code != http.StatusOK {
		t.Logf("/readyz: %d %s", code, body)
	}
	is.Equal(code, http.StatusOK) // ready as soon as it serves
	c := dialURL(t, pr.url)

	// A deployment on the source that answers runs meanwhile.
	dep := buildToolDeployment(t, c, "good.default", "counter", "startup_counter")
	runCompleted(t, c, dep, p.Object{})

	// The background listing connects a few hung sources at a time; the
	// others wait, without a session.
	statuses, err := c.GetConnectionStatuses(testContext(t))
	is.NoErr(err)
	states := map[string]int{}
	for _, st := range statuses.Statuses {
		if st.ConnectionID != "good.default" {
			states[st.Session.State]++
			is.Equal(st.HasSnapshot, stored) // a stored catalog is served
		}
	}
	t.Logf("hung sources by session state: %v", states)
	is.Equal(states[string(session.StateOpen)], 0)
	is.True(states[string(session.StateConnecting)] <= startRefreshes)                     // a bounded refresh, not a storm
	is.True(states[string(session.StateIdle)] >= hungSources-2*startRefreshes)             // most were never touched
	is.Equal(states[string(session.StateDegraded)]+states[string(session.StateClosed)], 0) // none given up on
	return c
}

// hungUpstream is an HTTP server that never answers: each request waits
// until its client goes away or the test ends.
func hungUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	ended := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-ended:
		}
	}))
	t.Cleanup(func() {
		close(ended)
		s.Close()
	})
	return s
}

// toolCatalog is a catalog of connection id with one tool taking an
// object, listed at fetched.
func toolCatalog(id, tool string, fetched time.Time) catalog.Snapshot {
	return catalog.Snapshot{
		ConnectionID: id, FetchedAtEpochMs: fetched.UnixMilli(), MaxAgeSeconds: catalog.DefaultMaxAgeSeconds,
		Tools:     []catalog.Tool{{Name: tool, Description: "a stored tool", InputSchema: map[string]any{"type": "object"}}},
		Resources: []catalog.Resource{}, Prompts: []catalog.Prompt{},
	}
}

// storeCatalogs saves snaps in the SQLite store under root, as a service
// that listed them before would have.
func storeCatalogs(t *testing.T, root string, snaps []catalog.Snapshot) {
	t.Helper()
	is := is.New(t)
	is.NoErr(os.MkdirAll(root, 0o700))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := sqlite.Open(ctx, filepath.Join(root, app.DatabaseFile))
	is.NoErr(err)
	for _, snap := range snaps {
		is.NoErr(st.SaveCatalog(ctx, snap))
	}
	is.NoErr(st.Close())
}
