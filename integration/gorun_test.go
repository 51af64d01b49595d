package integration

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestGoRunServeStopsWithTheGoCommand runs the README's first command,
// `go run ./cmd/mcpflow serve`, and stops the go command with SIGTERM
// (which go run does not pass on): the server it started stops too,
// rather than staying behind orphaned with its port and store.
func TestGoRunServeStopsWithTheGoCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("go run compiles the binary")
	}
	is := is.New(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	cmd := exec.Command("go", "run", "./cmd/mcpflow", "serve", "--config", writeConfig(t, dir), "--listen", addr)
	cmd.Dir = ".." // the module root, as in the README
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	is.NoErr(cmd.Start())
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		for _, pid := range descendantsOf(cmd.Process.Pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = cmd.Process.Kill()
		<-exited
	})
	// 2 minutes: compiling under -race load
	poll.For(t, "go run ./cmd/mcpflow serve serving", 2*time.Minute, func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	servers := descendantsOf(cmd.Process.Pid)
	is.True(len(servers) > 0) // go run started the server as its child
	t.Logf("go run %d started %v", cmd.Process.Pid, servers)

	is.NoErr(cmd.Process.Signal(syscall.SIGTERM))
	<-exited
	poll.For(t, fmt.Sprintf("servers %v gone once go run was stopped", servers), 20*time.Second, func() bool {
		return !slices.ContainsFunc(servers, alive)
	})
	_, err := http.Get("http://" + addr + "/healthz")
	is.True(err != nil) // the port is free again
}
