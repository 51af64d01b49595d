package integration

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// serversMarked lists the live fakemcp processes below this test process
// whose command line carries marker.
func serversMarked(marker string) []int {
	var out []int
	for _, pid := range descendantsOf(os.Getpid()) {
		exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
		if err != nil || exe != fakeMCP {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && bytes.Contains(cmdline, []byte(marker)) {
			out = append(out, pid)
		}
	}
	return out
}

// awaitServers polls until n marked fakemcp processes are alive.
func awaitServers(t *testing.T, marker string, n int) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	var live []int
	if !poll.Until(10*time.Second, func() bool { live = serversMarked(marker); return len(live) == n }) {
		t.Logf("%d fakemcp processes alive (%v), want %d", len(live), live, n)
		is.Fail() // the stdio servers are as many as the live sessions
	}
}

// counted runs deployment and returns the counter it answered.
func counted(t *testing.T, c *client.Client, deployment string) float64 {
	t.Helper()
	is := is.New(t)
	is.Helper()
	run, err := c.RunDeployment(testContext(t), p.StartRunParams{DeploymentID: deployment, WorkflowInput: p.Object{}})
	is.NoErr(err)
	is.Equal(run.Status, "completed")
	n, _ := run.Output["count"].(float64)
	return n
}

func TestBindingSessionScopesOverOneStdioSource(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts the stdio server processes through /proc")
	}
	is := is.New(t)
	var nonce [8]byte
	_, err := rand.Read(nonce[:])
	is.NoErr(err)
	marker := "scope-test-" + hex.EncodeToString(nonce[:]) // fakemcp ignores its arguments
	svc := startService(t, nil, stdioSource("fake.scoped", fakeMCP, marker))
	c := svc.dial(t)

	// The same workflow, deployed with each session scope.
	shared := buildCounterDeployment(t, c, "fake.scoped")
	for id, session := range map[string]string{"counter.per_run": "run", "counter.per_deployment": "deployment"} {
		_, err := c.SaveDeployment(testContext(t), p.Object{
			"id": id, "artifact_id": "counter_workflow", "artifact_version": 1,
			"bindings": []any{p.Object{"logical_source": "fake.scoped", "concrete_source": "fake.scoped", "session": session}},
		})
		is.NoErr(err)
	}
	dep, err := c.InspectDeployment(testContext(t), "counter.per_run")
	is.NoErr(err)
	is.Equal(dep.Bindings[0].Session, "run") // stored and shown

	is.Equal(counted(t, c, shared), 1.0)
	is.Equal(counted(t, c, shared), 2.0) // the shared session keeps its state
	awaitServers(t, marker, 1)

	is.Equal(counted(t, c, "counter.per_run"), 1.0) // a process of its own
	is.Equal(counted(t, c, "counter.per_run"), 1.0) // and the next run another
	awaitServers(t, marker, 1)                      // each closed when its run ended

	is.Equal(counted(t, c, "counter.per_deployment"), 1.0)
	is.Equal(counted(t, c, "counter.per_deployment"), 2.0) // the deployment's runs share one
	awaitServers(t, marker, 2)                             // which outlives them
	is.Equal(counted(t, c, shared), 3.0)                   // apart from the shared one

	statuses, err := c.GetConnectionStatuses(testContext(t))
	is.NoErr(err)
	is.Equal(statuses.Total, 1) // one row per connection: its shared session
	is.Equal(statuses.Statuses[0].Session.SessionsOpened, 1)

	var deleted p.DeleteDeploymentResult
	is.NoErr(c.Call(testContext(t), p.MethodDeploymentsDelete, p.DeploymentIDParams{DeploymentID: "counter.per_deployment"}, &deleted))
	is.True(deleted.Deleted)
	awaitServers(t, marker, 1) // a deleted deployment's session closes
}
