package service_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/jsonrpc"
	"github.com/mcpflow/mcpflow/api/protocol"
)

// paramsMessage asserts err is -32602 and returns its message (which the
// edge sends as data.message).
func paramsMessage(t *testing.T, err error) string {
	t.Helper()
	invalidParams(t, err)
	var e *jsonrpc.Error
	errors.As(err, &e)
	return e.Message
}

func TestABindingsSessionIsCheckedAndKept(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)

	for _, session := range []string{"shared", "deployment", "run"} {
		deploy(t, f, `{"id":"d-`+session+`","artifact_id":"echo","artifact_version":1,"bindings":[{"logical_source":"fake.one","concrete_source":"fake.one","session":"`+session+`"}]}`)
		d := mustCall[protocol.Deployment](t, f, protocol.MethodDeploymentsInspect, `{"deployment_id":"d-`+session+`"}`)
		is.Equal(d.Bindings, []protocol.Binding{{LogicalSource: "fake.one", ConcreteSource: "fake.one", Session: session}})
	}
	deploy(t, f, `{"id":"d-absent","artifact_id":"echo","artifact_version":1,"bindings":[{"logical_source":"fake.one","concrete_source":"fake.one"}]}`)
	raw := string(f.raw(t, protocol.MethodDeploymentsInspect, `{"deployment_id":"d-absent"}`))
	is.True(!strings.Contains(raw, "session")) // absent stays absent: the reference's shape

	_, err := f.call(t, protocol.MethodDeploymentsSave, `{"deployment":{"id":"bad","artifact_id":"echo","artifact_version":1,"bindings":[{"logical_source":"fake.one","concrete_source":"fake.one","session":"call"}]}}`)
	msg := paramsMessage(t, err)
	is.True(strings.Contains(msg, `session must be shared, deployment or run, got "call"`)) // says what is allowed

	_, err = f.call(t, protocol.MethodDeploymentsSave, `{"deployment":{"id":"bad","artifact_id":"echo","artifact_version":1,"bindings":[
		{"logical_source":"a","concrete_source":"fake.one","session":"run"},{"logical_source":"b","concrete_source":"fake.one"}]}}`)
	msg = paramsMessage(t, err)
	is.True(strings.Contains(msg, `connection "fake.one" is bound with session "run" and "shared"`)) // one connection, one session
	_, err = f.call(t, protocol.MethodDeploymentsInspect, `{"deployment_id":"bad"}`)
	domainError(t, err, "KeyError") // nothing was saved
}

func TestABindingsSessionScopesTheUpstreamSessionOfItsRuns(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	scaffold(t, f, "ws-counter", "fake.one.counter")
	saveArtifact(t, f, "ws-counter", "counter", "")
	for id, session := range map[string]string{"shared": "", "per-run": `,"session":"run"`, "dep-a": `,"session":"deployment"`, "dep-b": `,"session":"deployment"`} {
		deploy(t, f, `{"id":"`+id+`","artifact_id":"counter","artifact_version":1,"bindings":[{"logical_source":"fake.one","concrete_source":"fake.one"`+session+`}]}`)
	}
	count := func(deployment string) any {
		t.Helper()
		r := startRun(t, f, `{"deployment_id":"`+deployment+`"}`)
		is.Equal(r.Status, "completed")
		return r.Output["count"]
	}

	is.Equal(count("shared"), 1.0)
	is.Equal(count("per-run"), 1.0) // a session of its own
	is.Equal(count("per-run"), 1.0) // and the next run another
	is.Equal(count("dep-a"), 1.0)
	is.Equal(count("dep-a"), 2.0) // the runs of one deployment share theirs
	is.Equal(count("dep-b"), 1.0) // another deployment has its own
	is.Equal(count("shared"), 2.0)

	// The connection's status still shows its one shared session.
	st := mustCall[protocol.ListConnectionStatusesResult](t, f, protocol.MethodConnectionStatusesList, `{}`)
	rows := 0
	for _, row := range st.Statuses {
		if row.ConnectionID == "fake.one" {
			rows++
			is.Equal(row.Session.SessionsOpened, 1)
		}
	}
	is.Equal(rows, 1)

	// A deleted deployment's session closes; one of that name saved
	// again starts afresh.
	mustCall[protocol.DeleteDeploymentResult](t, f, protocol.MethodDeploymentsDelete, `{"deployment_id":"dep-a"}`)
	deploy(t, f, `{"id":"dep-a","artifact_id":"counter","artifact_version":1,"bindings":[{"logical_source":"fake.one","concrete_source":"fake.one","session":"deployment"}]}`)
	is.Equal(count("dep-a"), 1.0)
	is.Equal(count("dep-b"), 2.0)
}
