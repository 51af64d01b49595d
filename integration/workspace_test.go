package integration

import (
	"fmt"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/api/client"
	p "github.com/mcpflow/mcpflow/api/protocol"
	"github.com/mcpflow/mcpflow/fakes"
)

// TestConcurrentEditorsGetOneSuccessPerRevision has 50 writers, on 5
// WebSocket connections, edit one workspace at the same revision, round
// after round: exactly one edit commits per revision, the other 49 get
// "conflict" and change nothing.
func TestConcurrentEditorsGetOneSuccessPerRevision(t *testing.T) {
	is := is.New(t)
	svc := startService(t, session.Factories{config.TransportStdio: fakes.NewInMemory(nil)}, stdioSource("fixture.default", "in-memory"))
	clients := make([]*client.Client, 5)
	for i := range clients {
		clients[i] = svc.dial(t)
	}
	_, err := clients[0].RefreshConnectionCatalog(testContext(t), "fixture.default")
	is.NoErr(err)
	_, err = clients[0].CreateDraftWorkspaceFromCapability(testContext(t), p.CreateFromCapabilityParams{WorkspaceID: "shared_ws", CapabilityName: "fixture.default.counter"})
	is.NoErr(err)

	const writers, rounds = 50, 4
	for revision := 1; revision <= rounds; revision++ {
		results := make([]p.WorkspaceResult, writers)
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[w] = clients[w%len(clients)].Call(testContext(t), p.MethodWorkspaceSetName,
					p.SetNameParams{WorkspaceID: "shared_ws", Revision: revision, Name: fmt.Sprintf("writer_%d", w)}, &results[w])
			}()
		}
		wg.Wait()
		winner, conflicts := -1, 0
		for w := range writers {
			is.NoErr(errs[w])
			switch results[w].Status {
			case "valid":
				is.Equal(winner, -1) // only one writer wins a revision
				winner = w
				is.Equal(results[w].Revision, revision+1)
			case "conflict":
				conflicts++
				is.Equal(results[w].Diagnostics[0].Code, "revision_conflict")
			default:
				t.Logf("writer %d: status %q", w, results[w].Status)
				is.Fail() // every writer gets valid or conflict
			}
		}
		is.Equal(conflicts, writers-1)
		ws, err := clients[0].GetDraftWorkspace(testContext(t), "shared_ws", true)
		is.NoErr(err)
		is.Equal(ws.Revision, revision+1)
		is.Equal(ws.Draft["name"], fmt.Sprintf("writer_%d", winner)) // the winner's edit, and only it, is stored
	}
}
