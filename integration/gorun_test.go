package integration

import (
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
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
	deadline := time.Now().Add(2 * time.Minute) // compiling under -race load
	for {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("go run ./cmd/mcpflow serve did not serve within 2 minutes")
		}
		time.Sleep(50 * time.Millisecond) // polling until the server answers
	}
	servers := descendantsOf(cmd.Process.Pid)
	is.True(len(servers) > 0) // go run started the server as its child
	t.Logf("go run %d started %v", cmd.Process.Pid, servers)

	is.NoErr(cmd.Process.Signal(syscall.SIGTERM))
	<-exited
	deadline = time.Now().Add(20 * time.Second)
	for _, pid := range servers {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("server %d still running 20s after go run was stopped", pid)
			}
			time.Sleep(20 * time.Millisecond) // polling until the server is gone
		}
	}
	_, err := http.Get("http://" + addr + "/healthz")
	is.True(err != nil) // the port is free again
}
