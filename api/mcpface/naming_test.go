package mcpface

import (
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
)

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,48}$`)

func TestToolNamesAreShortSafeAndStable(t *testing.T) {
	is := is.New(t)
	is.Equal(toolName("counter_workflow.default"), "counter_workflow")
	is.Equal(toolName("billing.eu-west"), "billing_eu-west")
	is.Equal(toolName("ünï.default"), "_n_")
	long := toolName(strings.Repeat("a", 60) + ".team")
	is.True(validName.MatchString(long))
	is.Equal(len(long), MaxToolName)
	is.Equal(long, toolName(strings.Repeat("a", 60)+".team")) // the same id, the same name
	is.True(long != toolName(strings.Repeat("a", 60)+".other"))
}

func TestCollidingDeploymentsGetDeterministicNames(t *testing.T) {
	is := is.New(t)
	none := func(string) bool { return false }
	ids := []string{"a_b.default", "a.b", "a_b"}
	first := assignNames(ids, nil, none)
	is.Equal(first["a.b"], "a_b") // the smallest id keeps the name
	is.True(first["a_b"] != "a_b" && first["a_b.default"] != "a_b")
	is.True(first["a_b"] != first["a_b.default"])
	again := assignNames([]string{"a_b", "a.b", "a_b.default"}, nil, none)
	is.Equal(first, again) // the order they come in does not matter
	for _, n := range first {
		is.True(validName.MatchString(n))
	}
}

func TestACustomNameWinsAndOwnToolsAreReserved(t *testing.T) {
	is := is.New(t)
	reserved := func(n string) bool { return n == "mcpflow_get_run" }
	names := assignNames([]string{"x.default", "y.default", "mcpflow_get_run"}, map[string]string{"y.default": "x"}, reserved)
	is.Equal(names["y.default"], "x")
	is.True(names["x.default"] != "x")
	is.True(names["mcpflow_get_run"] != "mcpflow_get_run")
}
