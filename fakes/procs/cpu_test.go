package procs

import (
	"os"
	"testing"
	"time"

	"github.com/matryer/is"
)

// The CPU time of this process grows while it spins.
func TestCPUTimeCountsWhatAProcessSpends(t *testing.T) {
	is := is.New(t)
	before, err := CPUTime(os.Getpid())
	is.NoErr(err)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		now, err := CPUTime(os.Getpid())
		is.NoErr(err)
		if now >= before+3*clockTick {
			return
		}
	}
	t.Fatal("5 s of spinning used less than 30 ms of CPU")
}

func TestCPUTimeOfAProcessThatDoesNotExistFails(t *testing.T) {
	is := is.New(t)
	_, err := CPUTime(1 << 30)
	is.True(err != nil)
}
