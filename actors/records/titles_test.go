package records_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/records"
)

func TestScaffoldTitleIsTheIDInWords(t *testing.T) {
	is := is.New(t)
	is.Equal(records.ScaffoldTitle("counter_workflow"), "Counter Workflow")
	is.Equal(records.ScaffoldTitle("mine"), "Mine")
	is.Equal(records.ScaffoldTitle("search-issues.v2"), "Search Issues V2")
}
