package run

import (
	"github.com/mcpflow/mcpflow/actors/reply"
	"github.com/mcpflow/mcpflow/actors/store"
	"github.com/mcpflow/mcpflow/actors/workflow"
)

// Failure codes of what Started may tell: a resume the run refused
// (workflow.ErrResume), a run whose id was taken (store.ErrExists), a
// node whose cluster membership lapsed (store.ErrNotMember), a run whose
// idempotency key another run holds (store.ErrKeyTaken); and what
// Stopped.Unwritten may: a store whose disk is full (store.ErrFull).
const (
	CodeResumeRefused = "resume_refused"
	CodeRunExists     = "run_exists"
	CodeStoreFull     = "store_full"
	CodeNotMember     = "not_member"
	CodeKeyTaken      = "idempotency_key_taken"
)

func init() {
	reply.Register(CodeResumeRefused, workflow.ErrResume)
	reply.Register(CodeRunExists, store.ErrExists)
	reply.Register(CodeStoreFull, store.ErrFull)
	reply.Register(CodeNotMember, store.ErrNotMember)
	reply.Register(CodeKeyTaken, store.ErrKeyTaken)
}

// Started answers Spec.Started: whether the run's first record was
// committed (for a new run, before any of its steps ran). Error is set
// when it was not, or when the resume was refused (errors.Is
// workflow.ErrResume); the run then changed nothing. Run is that record
// without its checkpoint and state.
type Started struct {
	CorrelationID uint64
	Run           store.Run
	Error         *reply.Failure
}

// Correlation implements reply.Answer.
func (m Started) Correlation() uint64 { return m.CorrelationID }

// Stopped answers Spec.Done and Cancel with the record the run stopped
// with, once committed: terminal, interrupted, or (after a Halt) running.
//
// A Cancel taken while the run's commit is being retried (commit.go) is
// answered at once with Unwritten set: why the store has not taken the
// run's later state; Run is then the record as last committed (running),
// and the run is written cancelled once a retry lands.
type Stopped struct {
	CorrelationID uint64
	Run           store.Run
	Unwritten     *reply.Failure
}

// Correlation implements reply.Answer.
func (m Stopped) Correlation() uint64 { return m.CorrelationID }

// Cancel asks a run to end as cancelled. Reply is answered (Stopped) with
// the run's final record, once committed.
type Cancel struct {
	Reason string
	Reply  reply.Address
}

// CancelByID asks a node's run desk (actors/runs) to cancel run RunID if
// that node runs it: the desk forwards a Cancel with Reason and Reply to
// the run's actor, and ignores a run it does not run, whose Reply is then
// never answered. With it a node cancels a run another node runs, knowing
// only the run's id.
type CancelByID struct {
	RunID  string
	Reason string
	Reply  reply.Address
}

// Halt stops a run, for a shutdown, at its next commit boundary without
// ending it: no further call goes out, a commit in progress is finished
// (and the results that arrived during it are committed too, rather than
// lost), and the actor stops. The run stays running in the store, its
// checkpoint listing the calls it had out, so the next start recovers it
// by the usual rules: it resumes when those calls are safe to repeat and
// is failed otherwise. Done is answered with the record as committed.
type Halt struct{}
