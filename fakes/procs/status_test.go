package procs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/fakes/procs"
)

func TestUsageOfThisProcessCountsItsMemoryAndItsFiles(t *testing.T) {
	is := is.New(t)
	before, err := procs.UsageOf(os.Getpid())
	is.NoErr(err)
	is.True(before.RSSBytes > 1<<20) // a Go test binary holds more than a MiB
	is.True(before.FDs >= 3)         // stdin, stdout and stderr at least

	f, err := os.Create(filepath.Join(t.TempDir(), "held"))
	is.NoErr(err)
	defer f.Close()
	after, err := procs.UsageOf(os.Getpid())
	is.NoErr(err)
	is.Equal(after.FDs, before.FDs+1) // the file just opened
}

func TestUsageOfAProcessThatDoesNotExistFails(t *testing.T) {
	_, err := procs.UsageOf(1 << 30) // above any pid_max
	is.New(t).True(err != nil)
}
