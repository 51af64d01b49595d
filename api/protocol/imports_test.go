package protocol_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// The API's types are its own: api/protocol depends on no store or
// workflow type, so a change to the on-disk format or to the language's Go
// types cannot change the public contract.
func TestProtocolDependsOnNoStoreOrWorkflowType(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	is.NoErr(err) // go list answers
	var ours []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/mcpflow/mcpflow/") {
			ours = append(ours, strings.TrimPrefix(p, "github.com/mcpflow/mcpflow/"))
		}
	}
	is.Equal(ours, []string{"api/protocol"}) // no package of mcpflow's but itself
}
