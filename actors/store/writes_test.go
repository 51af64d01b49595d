package store_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/store/sqlite"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// The commits of a run whose one step's 1 MiB result is also its input
// (commitLargeResult: seven places in the records, and the record written
// twice) hand the SQLite store the megabyte once.
func TestAOneMebibyteResultIsWrittenToTheStoreOnce(t *testing.T) {
	is := is.New(t)
	s := openSQLite(t, sqlite.SyncNormal)
	text := strings.Repeat("x", 1<<20)
	before := s.BytesWritten()
	is.NoErr(commitLargeResult(t.Context(), s, "run-big", text))
	written := s.BytesWritten() - before
	t.Logf("a run whose 1 MiB input is its step's result wrote %d bytes", written)
	is.True(written < 3<<19) // under 1.5 MiB in all

	r, err := s.GetRun(t.Context(), "run-big")
	is.NoErr(err)
	is.Equal(r.Output, workflow.Object{"message": text}) // read back whole
	is.Equal(r.Checkpoint.Scopes["root"].State, workflow.Object{"message": text})
	trace, err := s.ReadTrace(t.Context(), "run-big", 0, 0)
	is.NoErr(err)
	is.Equal(trace[0].StateChanges, workflow.Object{"state.message": text})
}

// A pure step hands the store its trace entry and a pointer to it, under
// 256 bytes, and each commit the run's record besides (here under 1 KiB),
// whose large values (a 64 KiB document in the input and the state) are
// written once, not at each commit.
func TestAThousandPureStepsWriteUnder256BytesEachBesidesTheirCommits(t *testing.T) {
	is := is.New(t)
	s := openSQLite(t, sqlite.SyncNormal)
	before := s.BytesWritten()
	is.NoErr(commitPureSteps(t.Context(), s, "run-spin", "", 10, 100))
	written := s.BytesWritten() - before
	t.Logf("1,000 pure steps in 10 commits wrote %d bytes", written)
	is.True(written < 1000*256+11*1024) // 256 bytes a step, 1 KiB a commit

	doc := strings.Repeat("d", 64<<10)
	before = s.BytesWritten()
	is.NoErr(commitPureSteps(t.Context(), s, "run-doc", doc, 10, 100))
	written = s.BytesWritten() - before
	t.Logf("1,000 pure steps in 10 commits, with a 64 KiB document in the input and the state, wrote %d bytes", written)
	is.True(written < 1000*256+11*1024+64<<10) // and the document once
}
