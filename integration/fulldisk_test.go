package integration

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/client"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/cmd/mcpflow/app"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// tmpfsStore mounts a 5 MiB tmpfs as dir/store, the store root of the
// config writeConfig writes in dir (whose logs stay off it), unmounted at
// cleanup, after the processes started later are gone. It skips the test,
// saying why, where it cannot mount one (not root, no tmpfs); under CI
// (CI=true), which runs as root, it fails instead.
func tmpfsStore(t *testing.T, dir string) string {
	t.Helper()
	is := is.New(t)
	is.Helper()
	root := filepath.Join(dir, "store")
	is.NoErr(os.MkdirAll(root, 0o700))
	why := ""
	if os.Geteuid() != 0 {
		why = "mounting a tmpfs needs root"
	} else if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=5m", "tmpfs", root).CombinedOutput(); err != nil {
		why = fmt.Sprintf("mount -t tmpfs at %s: %v: %s", root, err, strings.TrimSpace(string(out)))
	}
	if why != "" {
		if os.Getenv("CI") == "true" && os.Geteuid() == 0 {
			t.Log(why)
			is.Fail() // CI runs as root and mounts the tmpfs
		}
		t.Skip("full-disk test: " + why)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", root).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", root, err, out)
		}
	})
	return root
}

// fillDisk writes a file under root until its disk has no room left, and
// returns the function that removes it.
func fillDisk(t *testing.T, root string) (free func()) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	path := filepath.Join(root, "filler")
	f, err := os.Create(path)
	is.NoErr(err)
	chunk := make([]byte, 64<<10)
	for {
		if _, err = f.Write(chunk); err != nil {
			break
		}
	}
	is.True(errors.Is(err, syscall.ENOSPC)) // written until the disk is full
	is.NoErr(f.Close())
	return func() { is.NoErr(os.Remove(path)) }
}

// storeFull reports whether err is the StoreFull domain error.
func storeFull(err error) bool {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.OperationFailed {
		return false
	}
	data, ok := rpcErr.Data.(map[string]any)
	return ok && data["code"] == "StoreFull"
}

// pinTheLog holds a read transaction open on the database of the store
// at root until release, or the test's end. Once a checkpoint has copied
// the whole of SQLite's write-ahead log and no reader needs it, the next
// commit starts the log over from the top of its file: the file's room
// is then free to commit into, full disk or not, and the store's
// checkpointer makes such a checkpoint within a second. A reader that
// holds its snapshot keeps the log from starting over (or, if it reads
// the database file alone, keeps checkpoints from copying into it), so
// that once logFiller.fill has written the room the file has, every
// commit needs disk space.
func pinTheLog(t *testing.T, root string) (release func()) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(root, app.DatabaseFile))
	is.NoErr(err)
	tx, err := db.BeginTx(testContext(t), &sql.TxOptions{ReadOnly: true})
	is.NoErr(err)
	var n int
	is.NoErr(tx.QueryRow(`SELECT count(*) FROM runs`).Scan(&n)) // the snapshot is taken at the first read
	var once sync.Once
	release = func() {
		once.Do(func() {
			is.NoErr(tx.Rollback())
			is.NoErr(db.Close())
		})
	}
	t.Cleanup(release)
	return release
}

// logFiller writes to the store until its log has no room left in its
// file for even the smallest commit: a run's step, one page of the log.
type logFiller struct {
	c        *client.Client
	renamed  string // a workspace it renames, which rewrites a page
	revision int
}

// newLogFiller creates the workspace the filler renames, while the disk
// has room.
func newLogFiller(t *testing.T, c *client.Client) *logFiller {
	t.Helper()
	is := is.New(t)
	is.Helper()
	f := &logFiller{c: c, renamed: "renamed_filler"}
	var ws p.WorkspaceResult
	is.NoErr(c.Call(testContext(t), p.MethodWorkspaceCreateEmpty, p.Object{"workspace_id": f.renamed, "name": "renamed_0"}, &ws))
	f.revision = ws.Revision
	return f
}

// fill saves draft workspaces of 10 KB, some pages of the log each, until
// one is refused as StoreFull, then renames its workspace, a page each,
// until a rename is refused too: the log has then written what room its
// file had, down to less than a page. It fails on any other error, or if
// 500 writes of either kind fit.
func (f *logFiller) fill(t *testing.T) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	title := strings.Repeat("full disk ", 1_000)
	writes := []struct {
		what  string
		write func(i int) error
	}{
		{"a 10 KB workspace", func(i int) error {
			id := fmt.Sprintf("filler_%d_%d", time.Now().UnixNano(), i)
			return f.c.Call(testContext(t), p.MethodWorkspaceCreateEmpty, p.Object{"workspace_id": id, "name": "filler", "title": title}, nil)
		}},
		{"a rename", func(i int) error {
			var ws p.WorkspaceResult
			err := f.c.Call(testContext(t), p.MethodWorkspaceSetName, p.SetNameParams{
				WorkspaceID: f.renamed, Revision: f.revision, Name: fmt.Sprintf("renamed_%d", (i+1)%10)}, &ws) // never its name before
			if err == nil {
				is.True(ws.Status != "conflict") // renamed
				f.revision = ws.Revision
			}
			return err
		}},
	}
	for _, w := range writes {
		refused := false
		for i := 0; i < 500 && !refused; i++ {
			if err := w.write(i); err != nil {
				t.Logf("%s refused after %d written: %v", w.what, i, err)
				is.True(storeFull(err)) // refused for the full disk, saying so
				refused = true
			}
		}
		is.True(refused) // the disk is full within 500 writes
	}
}

// statuses is run id's status as runs.inspect and as runs.list show it.
func statuses(t *testing.T, c *client.Client, id string) (inspected, listed string) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	ctx := testContext(t)
	r, err := c.InspectRun(ctx, id)
	is.NoErr(err) // reads are served, disk full or not
	page, err := c.ListRuns(ctx, p.ListRunsParams{})
	is.NoErr(err)
	for _, row := range page.Runs {
		if row.RunID == id {
			return r.Status, row.Status
		}
	}
	t.Logf("run %s not listed", id)
	is.Fail() // the run is listed
	return "", ""
}

// statusEverywhere is the status of run id, which is not changing, as
// runs.inspect and runs.list show it: they must agree.
func statusEverywhere(t *testing.T, c *client.Client, id string) string {
	t.Helper()
	inspected, listed := statuses(t, c, id)
	is.New(t).Equal(listed, inspected) // runs.list and runs.inspect agree
	return inspected
}

// shownAs reports whether runs.inspect and runs.list both show run id as
// status.
func shownAs(t *testing.T, c *client.Client, id, status string) bool {
	t.Helper()
	inspected, listed := statuses(t, c, id)
	return inspected == status && listed == status
}

// onTmpfs is the real binary serving a store on a tmpfs (tmpfsStore),
// with the slow.default source and a deployment of its sleep tool.
type onTmpfs struct {
	root, cfgPath string
	pr            *process
	c             *client.Client
	deployment    string
}

func startOnTmpfs(t *testing.T, logName string) onTmpfs {
	t.Helper()
	dir := t.TempDir()
	o := onTmpfs{root: tmpfsStore(t, dir), cfgPath: writeConfig(t, dir, stdioSource("slow.default", fakeMCP))}
	o.pr = startProcess(t, o.cfgPath, logName)
	o.c = dialURL(t, o.pr.url)
	o.deployment = buildToolDeploymentFor(t, o.c, "slow.default", "sleep")
	return o
}

// logged reports whether pr's log has a line with every one of parts.
func logged(t *testing.T, pr *process, parts ...string) bool {
	t.Helper()
	logs, err := os.ReadFile(pr.logs)
	is.New(t).NoErr(err)
	for line := range strings.SplitSeq(string(logs), "\n") {
		all := true
		for _, part := range parts {
			all = all && strings.Contains(line, part)
		}
		if all {
			return true
		}
	}
	return false
}

// TestARunThatCannotCommitOnAFullDiskAgreesEverywhereAndIsCancellable
// fills the store's disk (a 5 MiB tmpfs) under the real binary while two
// runs wait in their step: one whose step then ends, so that its progress
// cannot be committed, and one that is cancelled. Both stay running to
// the client, to runs.inspect and to runs.list while nothing can be
// written; the cancel is taken and answered StoreFull, saying the run is
// running in the store until its commit lands; /readyz and
// mcpflow_store_full say the disk is full. Once the filler is removed,
// with no restart, the first is written completed and the second
// cancelled, everywhere alike, and store_writable_again is recorded.
func TestARunThatCannotCommitOnAFullDiskAgreesEverywhereAndIsCancellable(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("full-disk test: starts the real binary on a tmpfs")
	}
	is := is.New(t)
	o := startOnTmpfs(t, "full.log")
	pr, c, deployment := o.pr, o.c, o.deployment
	ctx := testContext(t)
	start := func(ms int) string {
		res, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{"ms": ms}})
		is.NoErr(err)
		is.Equal(res.Status, "running")
		return *res.RunID
	}
	// The first run's step ends 6 s after its start, well after the disk
	// is filled below; the second's only by the cancel.
	ending, cancelled := start(6_000), start(120_000)
	poll.For(t, "both runs' calls in flight", settleWait, func() bool {
		a, lastA := runPosition(t, ctx, c, ending)
		b, lastB := runPosition(t, ctx, c, cancelled)
		return a == "running" && b == "running" && lastA >= 2 && lastB >= 2 // created, step_started
	})

	filler := newLogFiller(t, c)
	unpin := pinTheLog(t, o.root)
	free := fillDisk(t, o.root)
	filler.fill(t)
	poll.For(t, "the ended step's commit failed", 30*time.Second, func() bool {
		return logged(t, pr, "level=ERROR", "run="+ending)
	})
	is.Equal(statusEverywhere(t, c, ending), "running")    // as last committed, not failed
	is.Equal(statusEverywhere(t, c, cancelled), "running") // likewise

	_, err := c.CancelRun(ctx, p.CancelRunParams{RunID: cancelled})
	t.Logf("cancel on a full disk: %v", err)
	is.True(storeFull(err))                                                    // the cancel is answered: the disk is full
	is.True(strings.Contains(err.Error(), "is cancelled but not written yet")) // it was taken
	is.True(strings.Contains(err.Error(), "the store has it running"))         // and says what the store has
	is.Equal(statusEverywhere(t, c, cancelled), "running")                     // which the reads show
	code, body, err := readyz(pr.httpBase())
	is.NoErr(err)
	is.Equal(code, 503) // not ready for writes
	is.True(strings.Contains(body, "store_full"))
	full, found := scrapeMetrics(t, pr.url).Value("mcpflow_store_full")
	is.True(found)
	is.Equal(full, 1.0) // the gauge says so

	unpin()
	free()
	// Its step ended: so it is written; the cancel taken on the full disk
	// is written too.
	poll.For(t, "both runs written once the disk has room", settleWait, func() bool {
		return shownAs(t, c, ending, "completed") && shownAs(t, c, cancelled, "cancelled")
	})
	run, err := c.InspectRun(ctx, cancelled)
	is.NoErr(err)
	is.True(run.Error != nil && strings.HasPrefix(*run.Error, "cancelled")) // the run says it was cancelled
	poll.For(t, "readiness and the gauge back", settleWait, func() bool {
		code, _, err := readyz(pr.httpBase())
		f, _ := scrapeMetrics(t, pr.url).Value("mcpflow_store_full")
		return err == nil && code == 200 && f == 0
	})
	var events p.ListAdminEventsResult
	is.NoErr(c.Call(ctx, p.MethodAdminEventsList, p.Object{}, &events))
	kinds := map[string]int{}
	for _, e := range events.Events {
		kinds[e.Kind]++
	}
	// Recorded at each return of space: SQLite may have let a small write
	// through, in log space its file had, while the disk was full.
	is.True(kinds["store_writable_again"] >= 1) // the return of space is recorded
}

// TestMcpflowStartsReadOnlyOnAFullDisk stops the real binary, fills its
// store's disk and starts it again: it serves rather than exiting, says
// it is read-only (its log, /readyz 503 read_only, mcpflow_store_full),
// answers reads as before, and refuses writes, a run's start among them,
// as StoreFull.
func TestMcpflowStartsReadOnlyOnAFullDisk(t *testing.T) {
	t.Parallel() // its own mcpflow: see parallelTests
	if testing.Short() {
		t.Skip("full-disk test: starts the real binary on a tmpfs")
	}
	is := is.New(t)
	o := startOnTmpfs(t, "first.log")
	ctx := testContext(t)
	deployment := o.deployment
	res, err := o.c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{"ms": 1}})
	is.NoErr(err)
	id := *res.RunID
	poll.For(t, "the run completed", settleWait, func() bool { return shownAs(t, o.c, id, "completed") })
	code, _ := o.pr.terminate(t)
	is.Equal(code, 0)

	fillDisk(t, o.root)
	second := startProcess(t, o.cfgPath, "second.log")
	is.True(logged(t, second, "mcpflow serves read-only")) // it says so
	code, body, err := readyz(second.httpBase())
	is.NoErr(err)
	is.Equal(code, 503)
	is.True(strings.Contains(body, "read_only"))
	full, found := scrapeMetrics(t, second.url).Value("mcpflow_store_full")
	is.True(found)
	is.Equal(full, 1.0)

	c2 := dialURL(t, second.url)
	is.Equal(statusEverywhere(t, c2, id), "completed") // reads are served as before
	deployed, err := c2.ListDeployments(ctx)
	is.NoErr(err)
	is.Equal(len(deployed.Deployments), 1)
	_, err = c2.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{"ms": 1}})
	t.Logf("a start on the read-only store: %v", err)
	is.True(storeFull(err)) // refused, saying the disk is full
	err = c2.Call(ctx, p.MethodWorkspaceCreateEmpty, p.Object{"workspace_id": "later", "name": "later"}, nil)
	is.True(storeFull(err)) // every write is
	listed, err := c2.ListRuns(ctx, p.ListRunsParams{})
	is.NoErr(err)
	is.Equal(listed.Total, 1) // and nothing was half written
}
