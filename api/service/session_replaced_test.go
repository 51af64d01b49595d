package service_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/protocol"
)

func TestABindingsOnSessionReplacedIsCheckedAndKept(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	echoArtifact(t, f)

	for _, on := range []string{"continue", "fail"} {
		deploy(t, f, `{"id":"d-`+on+`","artifact_id":"echo","artifact_version":1,"bindings":[{"logical_source":"fake.one","concrete_source":"fake.one","on_session_replaced":"`+on+`"}]}`)
		d := mustCall[protocol.Deployment](t, f, protocol.MethodDeploymentsInspect, `{"deployment_id":"d-`+on+`"}`)
		is.Equal(d.Bindings, []protocol.Binding{{LogicalSource: "fake.one", ConcreteSource: "fake.one", OnSessionReplaced: on}})
	}

	_, err := f.call(t, protocol.MethodDeploymentsSave, `{"deployment":{"id":"bad","artifact_id":"echo","artifact_version":1,"bindings":[{"logical_source":"fake.one","concrete_source":"fake.one","on_session_replaced":"retry"}]}}`)
	msg := paramsMessage(t, err)
	is.True(strings.Contains(msg, "retry")) // refused, by the manifest or the binding's check

	_, err = f.call(t, protocol.MethodDeploymentsSave, `{"deployment":{"id":"bad","artifact_id":"echo","artifact_version":1,"bindings":[
		{"logical_source":"a","concrete_source":"fake.one","on_session_replaced":"fail"},{"logical_source":"b","concrete_source":"fake.one"}]}}`)
	msg = paramsMessage(t, err)
	is.True(strings.Contains(msg, `connection "fake.one" is bound with on_session_replaced "fail" and "continue"`)) // one connection, one answer
}
