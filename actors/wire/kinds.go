package wire

import (
	"reflect"

	"github.com/mcpflow/mcpflow/actors/guard"
	"github.com/mcpflow/mcpflow/actors/run"
	"github.com/mcpflow/mcpflow/actors/session"
	"github.com/mcpflow/mcpflow/actors/supervisor"
)

// Kind is one message type exchanged between actors: its name on the
// wire, and, for a node-local message, why it never leaves its node.
type Kind struct {
	Name string
	Type reflect.Type
	// Local, when set, says why the message never crosses nodes:
	// Encode refuses it.
	Local string
}

// kinds are every message type exchanged between actors (an actor's
// unexported messages, sent by its own goroutines and timers, never leave
// it). A new message type belongs here; the tests read the actors'
// Receive switches to make sure it is.
var kinds = []Kind{
	crossing[session.CallTool]("session.CallTool"),
	crossing[session.ReadResource]("session.ReadResource"),
	crossing[session.GetPrompt]("session.GetPrompt"),
	crossing[session.Complete]("session.Complete"),
	crossing[session.CancelCalls]("session.CancelCalls"),
	crossing[session.ToolResult]("session.ToolResult"),
	crossing[session.TaskCreated]("session.TaskCreated"),
	crossing[session.CallProgress]("session.CallProgress"),
	crossing[session.CallLog]("session.CallLog"),
	crossing[session.SetPolicy]("session.SetPolicy"),
	crossing[session.SetClient]("session.SetClient"),
	crossing[session.UpstreamRequest]("session.UpstreamRequest"),
	crossing[session.UpstreamWithdrawn]("session.UpstreamWithdrawn"),
	crossing[session.AnswerUpstream]("session.AnswerUpstream"),
	crossing[session.GetStatus]("session.GetStatus"),
	crossing[session.CurrentStatus]("session.CurrentStatus"),
	crossing[session.Status]("session.Status"),
	crossing[session.ListCatalog]("session.ListCatalog"),
	crossing[session.CatalogListed]("session.CatalogListed"),
	local[session.Replaced]("session.Replaced",
		"a session actor's report to its parent, the supervisor of its own node"),

	crossing[supervisor.RefreshCatalog]("supervisor.RefreshCatalog"),
	crossing[supervisor.CatalogRefreshed]("supervisor.CatalogRefreshed"),
	crossing[supervisor.GetStatuses]("supervisor.GetStatuses"),
	crossing[supervisor.Statuses]("supervisor.Statuses"),
	crossing[supervisor.ReleaseScope]("supervisor.ReleaseScope"),
	crossing[supervisor.Reconciled]("supervisor.Reconciled"),
	local[supervisor.Reconcile]("supervisor.Reconcile",
		"a node's own connection set, secrets expanded, from its own config and registry"),
	local[supervisor.TenureEnded]("supervisor.TenureEnded",
		"a node's own lease loss, told by its lease keeper to its supervisor"),
	local[supervisor.NodeLeft]("supervisor.NodeLeft",
		"a member leaving, told by the node's own view of the cluster to its supervisor"),

	crossing[run.Cancel]("run.Cancel"),
	crossing[run.CancelByID]("run.CancelByID"),
	crossing[run.AnswerInterrupt]("run.AnswerInterrupt"),
	crossing[run.AnswerByID]("run.AnswerByID"),
	crossing[run.Resumed]("run.Resumed"),
	crossing[run.Halt]("run.Halt"),
	crossing[run.Started]("run.Started"),
	crossing[run.Stopped]("run.Stopped"),

	local[guard.Panic]("guard.Panic",
		"a panic report to the actor itself or its parent, which share its engine"),
}

func crossing[T any](name string) Kind {
	return Kind{Name: name, Type: reflect.TypeFor[T]()}
}

func local[T any](name, why string) Kind {
	return Kind{Name: name, Type: reflect.TypeFor[T](), Local: why}
}

// byName and byType index kinds.
var (
	byName = map[string]Kind{}
	byType = map[reflect.Type]Kind{}
)

func init() {
	for _, k := range kinds {
		if _, dup := byName[k.Name]; dup {
			panic("wire: kind " + k.Name + " listed twice")
		}
		byName[k.Name], byType[k.Type] = k, k
	}
}

// Kinds returns every message type exchanged between actors.
func Kinds() []Kind { return append([]Kind(nil), kinds...) }
