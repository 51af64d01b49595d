package procs_test

import (
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/fakes/poll"
	"github.com/mcpflow/mcpflow/fakes/procs"
)

func TestMarkedFindsAGrandchildByItsEnvironmentAndForgetsItOnceDead(t *testing.T) {
	is := is.New(t)
	marker := "PROCS_TEST_MARK=" + strconv.FormatInt(time.Now().UnixNano(), 10)
	// sh forks sleep (the trailing command keeps sh from exec'ing it):
	// two marked processes, one the other's child.
	cmd := exec.Command("sh", "-c", "sleep 30; :")
	cmd.Env = []string{"PATH=/usr/bin:/bin", marker}
	is.NoErr(cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	marked := poll.Value(t, "sh and its sleep marked", 5*time.Second, func() ([]int, bool) {
		pids := procs.Marked(marker)
		return pids, len(pids) == 2
	})
	is.True(slices.Contains(marked, cmd.Process.Pid))          // the child
	is.Equal(procs.Marked("PROCS_TEST_MARK=none"), []int(nil)) // an entry nobody has

	for _, pid := range marked {
		is.NoErr(syscall.Kill(pid, syscall.SIGKILL))
	}
	_ = cmd.Wait() // sh is reaped; its sleep, re-parented, by init
	poll.For(t, "no marked process left", 5*time.Second, func() bool { return len(procs.Marked(marker)) == 0 })
}
