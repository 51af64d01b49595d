package service_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/contract"
	"github.com/mcpflow/mcpflow/api/protocol"
)

func TestEveryMethodDeclaresItsScope(t *testing.T) {
	is := is.New(t)
	table := newFixture(t).methods
	for _, name := range contract.Default().Methods() {
		m, ok := table[name]
		is.True(ok) // every contract method is served
		switch {
		case strings.HasPrefix(name, "workflow.admin."):
			is.Equal(m.Scope, access.Admin) // the admin namespace needs admin
		case m.Scope == "":
			t.Errorf("%s declares no scope", name)
		}
	}
	for name, want := range map[string]access.Scope{
		protocol.MethodHealth:            access.Read,
		protocol.MethodRunsInspect:       access.Read,
		protocol.MethodRunsSubscribe:     access.Read,
		protocol.MethodRunsStart:         access.Run,
		protocol.MethodRunsCancel:        access.Run,
		protocol.MethodCapabilitiesCall:  access.Run,
		protocol.MethodDeploymentsSave:   access.Author,
		protocol.MethodWorkspaceAddStep:  access.Author,
		protocol.MethodDeploymentsDelete: access.Author,
		protocol.MethodAccessWhoami:      access.Any,
	} {
		is.Equal(table[name].Scope, want) // the scope of name
	}
}
