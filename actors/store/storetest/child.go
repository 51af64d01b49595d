package storetest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// ChildExit is the exit code with which a test's child process (see
// EndInChild) ends itself once its writes are acknowledged.
const ChildExit = 3

// EndInChild runs t again in a child process of the test binary, with
// the environment variable env set to value, and checks that the child
// ended where it was made to: with ChildExit, which t exits with (no
// Close, no deferred call) when it finds env set, and nothing failed
// before. A store opened again then shows what a process that dies
// leaves.
func EndInChild(t *testing.T, env, value string) {
	t.Helper()
	is := is.New(t)
	is.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+value)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	is.True(errors.As(err, &exit))                  // the process did not end on its own
	is.Equal(exit.ExitCode(), ChildExit)            // but where it was made to, its writes acknowledged
	is.True(!strings.Contains(string(out), "FAIL")) // with nothing failed before
}
