package run_test

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/anthdm/hollywood/actor"
	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/fakes"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// fullDiskRun is a run of fake.one's sleep (60 s) on a store whose disk
// is filled once the run's call is out (its first record committed).
type fullDiskRun struct {
	pid  *actor.PID
	disk *fakes.FullDisk
	done *reply.Expected[run.Stopped]
}

func startOnFullDisk(t *testing.T, w *world, id string) fullDiskRun {
	t.Helper()
	disk := fakes.NewFullDisk(w.store)
	pid, done := w.startSleepingOn(t, id, disk)
	disk.Fill()
	return fullDiskRun{pid: pid, disk: disk, done: done}
}

// storedStatus is run id's status in the store.
func storedStatus(t *testing.T, w *world, id string) string {
	t.Helper()
	r, err := w.store.GetRun(wait(t), id)
	is.New(t).NoErr(err)
	return r.Status
}

// TestACancelTakenWhileTheDiskIsFullIsWrittenOnceSpaceReturns: a run
// cancelled while its store cannot write answers the cancel at once with
// its record as last committed (running) and why its cancel is not
// written; it retries its commit, staying running in the store and
// answering nobody that it ended, and once the disk has room it is
// written cancelled and says so.
func TestACancelTakenWhileTheDiskIsFullIsWrittenOnceSpaceReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		w := newWorld(t)
		r := startOnFullDisk(t, w, "run-full")

		answer := reply.Expect[run.Stopped](w.replies)
		w.engine.Send(r.pid, run.Cancel{Reason: "by the test", Reply: answer.To()})
		got, err := answer.Wait(wait(t))
		is.NoErr(err)                                          // the cancel is answered while the disk is full
		is.True(errors.Is(got.Unwritten.Err(), store.ErrFull)) // saying that it is not written, for a full disk
		is.Equal(got.Run.Status, store.RunRunning)             // with the run as last committed
		is.True(strings.Contains(got.Unwritten.Message, "is cancelled but not written yet; the store has it running"))
		is.Equal(storedStatus(t, w, "run-full"), store.RunRunning)

		poll.For(t, "the commit retried", patience, func() bool { return r.disk.Refused() >= 4 })
		synctest.Wait()
		is.True(!r.done.Arrived())                                 // no end is told while it is not written
		is.Equal(storedStatus(t, w, "run-full"), store.RunRunning) // the store still has it as last committed

		r.disk.Free()
		final, err := r.done.Wait(wait(t))
		is.NoErr(err)                                  // the run ends once its commit lands
		is.Equal(final.Run.Status, store.RunCancelled) // cancelled, as asked
		stored, err := w.store.GetRun(wait(t), "run-full")
		is.NoErr(err)
		is.Equal(stored.Status, store.RunCancelled) // and so written
		is.Equal(*stored.Error, `cancelled: by the test, while step "call" was running`)
	})
}

// TestAHaltWhileACommitIsRetriedStopsTheRunAsLastCommitted: a shutdown
// does not wait for a full disk: the halted run stops at once, answering
// the record the store has (running, its call listed), for the next
// start to recover.
func TestAHaltWhileACommitIsRetriedStopsTheRunAsLastCommitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		w := newWorld(t)
		r := startOnFullDisk(t, w, "run-halt-full")
		w.engine.Send(r.pid, run.Cancel{Reason: "by the test"}) // a commit that fails
		poll.For(t, "the commit retried", patience, func() bool { return r.disk.Refused() >= 2 })

		w.engine.Send(r.pid, run.Halt{})
		final, err := r.done.Wait(wait(t))
		is.NoErr(err)                                // the halted run stops, disk full or not
		is.Equal(final.Run.Status, store.RunRunning) // as the store has it
		is.Equal(len(final.Run.Checkpoint.Calls), 1) // with the call it had out
		is.Equal(storedStatus(t, w, "run-halt-full"), store.RunRunning)
	})
}
