package integration

import (
	"bufio"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	p "github.com/mcpflow/mcpflow/api/protocol"
)

// The warm path's bound: the files and packages of mcpflow a warm
// one-step workflow.runs.start passes through, edge to upstream and back,
// as this test counted them on 2026-12-02 after issue 22's rebuild (82 in
// 25 once the run manager, the live hub, the sources and the draft
// operations had moved out of api/service; 79 in 24 once the MCP face no
// longer followed the admin events without a client and the reply
// router's hop was gone; 78 once the service no longer made its run
// manager at first use; 76 in 22 once only the methods that push got the
// connection's notifier); 79 in 22 after issue 27, whose bounds put
// three files on every call: session/resultlimit_stream.go (each
// upstream message read under max_result_bytes), and store/values.go and
// sqlite/values.go (a run's large values written once); 95 in 22 after
// issues 28 and 29, which put on every call a run's upstream requests,
// live reports, tasks, session identity and input rounds
// (run/upstream.go, live.go, tasks.go, sessions.go, mrtr.go), the
// session's in-order notice reader, side channel and request handling
// (session/noticeread.go, notices.go, sidechannel.go, upstream.go,
// mrtr.go, replaced.go, failure.go), the wait for a lapsed membership
// (runs/member.go) and the did-you-mean wrapper on the method table
// (service/suggestions.go); 95 again after issue 32's first steps, whose
// new pieces on the path went to the files of their concepts (a run's
// commit handed to the store, with CreateRun and RecordProgress; the
// writer's head cache, in the writer; the records' encoder, with the
// values; the session's stdio connection and its decoder, in stdio.go;
// its idle buffer, with the message reader), all but the run journal
// (sqlite/journal.go); 92 once a run's call went over its session
// actor's line (supervisor/lines.go), not through the supervisor's
// routing (supervisor.go, placement.go, scope.go, no longer on the
// path). It keeps the path from growing. Issue 22's
// goal, 25 files in 10 packages, is not met: docs/architecture.md lists
// the files and what a shorter path would take.
const (
	warmPathFiles    = 92
	warmPathPackages = 22
)

// module is the import path prefix of mcpflow's packages.
const module = "github.com/mcpflow/mcpflow/"

// Runs of the warm path's two processes: both make warmUpRuns, the second
// warmPathRuns more.
const (
	warmUpRuns   = 20
	warmPathRuns = 100
)

// TestTheWarmPathOfARunStartStaysShort lists the files of mcpflow that a
// warm one-step run executes, and fails past the budget. It builds
// mcpflow with atomic coverage and runs it twice over the same steps, a
// real stdio upstream (fakemcp) and a one-step deployment calling its
// counter tool: once with warmUpRuns runs, once with warmPathRuns more.
// A statement on the warm path runs at least once a run, so its count
// grows by at least warmPathRuns from the first process to the second;
// what starting, deploying and stopping execute, and what a timer runs
// now and then, does not. It takes
// a coverage build, so it runs when MCPFLOW_WARMPATH is set (.ci/run sets
// it):
//
//	MCPFLOW_WARMPATH=1 go test -count=1 -run TestTheWarmPathOfARunStartStaysShort -v ./integration/
func TestTheWarmPathOfARunStartStaysShort(t *testing.T) {
	if os.Getenv("MCPFLOW_WARMPATH") == "" {
		t.Skip("builds mcpflow with coverage: set MCPFLOW_WARMPATH=1")
	}
	is := is.New(t)
	bin := filepath.Join(t.TempDir(), "mcpflow-cover")
	build := exec.Command("go", "build", "-cover", "-covermode=atomic", "-coverpkg="+module+"...", "-o", bin, module+"cmd/mcpflow")
	out, err := build.CombinedOutput()
	if err != nil {
		t.Log(string(out))
	}
	is.NoErr(err) // mcpflow builds with coverage
	base := warmPathCounts(t, bin, warmUpRuns)
	more := warmPathCounts(t, bin, warmUpRuns+warmPathRuns)
	ran := map[string]bool{}
	for block, n := range more {
		if n-base[block] >= warmPathRuns {
			file, _, _ := strings.Cut(block, ":")
			ran[strings.TrimPrefix(file, module)] = true
		}
	}
	files := make([]string, 0, len(ran))
	packages := map[string]bool{}
	for f := range ran {
		files = append(files, f)
		packages[path.Dir(f)] = true
	}
	slices.Sort(files)
	t.Logf("a warm one-step run passes through %d files in %d packages:\n%s", len(files), len(packages), strings.Join(files, "\n"))
	is.True(len(files) > 0)                    // the run was counted
	is.True(len(files) <= warmPathFiles)       // within the bound of files
	is.True(len(packages) <= warmPathPackages) // and of packages
}

// warmPathCounts runs the coverage-built mcpflow bin through runs
// one-step runs and a stop, and returns how often each block of mcpflow's
// code ran, by its position ("file:start,end").
func warmPathCounts(t *testing.T, bin string, runs int) map[string]int {
	t.Helper()
	is := is.New(t)
	dir := t.TempDir()
	counters := filepath.Join(dir, "counters")
	is.NoErr(os.Mkdir(counters, 0o755))
	t.Setenv("GOCOVERDIR", counters) // inherited by the process; fakemcp has no coverage to write
	cfg := writeServerConfig(t, dir, config.Server{Sources: []config.Connection{stdioSource("fixture.default", fakeMCP)}})
	pr := startProcessOf(t, bin, cfg, "mcpflow.log", "--run-wait", "30s")
	c := dialURL(t, pr.url)
	deployment := buildCounterDeployment(t, c, "fixture.default")
	ctx := testContext(t)
	for range runs {
		r, err := c.RunDeployment(ctx, p.StartRunParams{DeploymentID: deployment})
		is.NoErr(err)                   // the run is answered
		is.Equal(r.Status, "completed") // and completes
	}
	pr.stop(t) // the counters are written as it exits
	profile := filepath.Join(dir, "profile.txt")
	out, err := exec.Command("go", "tool", "covdata", "textfmt", "-i", counters, "-o", profile).CombinedOutput()
	if err != nil {
		t.Log(string(out))
	}
	is.NoErr(err) // covdata reads the counters
	return blockCounts(t, profile)
}

// blockCounts reads a text coverage profile ("file:start,end statements
// count" lines after the mode line) into counts by block, summing a
// block that appears more than once.
func blockCounts(t *testing.T, profile string) map[string]int {
	t.Helper()
	is := is.New(t)
	f, err := os.Open(profile)
	is.NoErr(err)
	defer f.Close()
	counts := map[string]int{}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) != 3 || !strings.HasPrefix(fields[0], module) {
			continue
		}
		n, err := strconv.Atoi(fields[2])
		is.NoErr(err) // a count is a number
		counts[fields[0]] += n
	}
	is.NoErr(lines.Err())
	is.True(len(counts) > 0) // the profile holds mcpflow's blocks
	return counts
}
