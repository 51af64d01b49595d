package service_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/workflow"
	"github.com/mcpflow/mcpflow/api/protocol"
)

func names(rows []protocol.CapabilitySummary) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.Name)
	}
	return out
}

func TestCapabilitiesListShowsBuiltinsAndEnabledToolsSortedByName(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	res := mustCall[protocol.ListCapabilitiesResult](t, f, protocol.MethodCapabilitiesList, `{}`)
	want := []string{"fake.one.counter", "fake.one.echo", "fake.one.fail", "web.main.search"}
	for _, c := range workflow.Builtins() {
		want = append(want, c.Name)
	}
	is.Equal(names(res.Capabilities), want) // built-ins and enabled connections' tools, never fake.off's
	is.Equal(res.Total, len(want))
	is.True(res.NextCursor == nil) // everything fits the default page

	byName := map[string]protocol.CapabilitySummary{}
	for _, c := range res.Capabilities {
		byName[c.Name] = c
	}
	echo := byName["fake.one.echo"]
	is.Equal(echo.SourceID, "fake.one")
	is.Equal(echo.Outcomes, []string{"ok", "error"}) // MCP tools route ok and error
	is.Equal(echo.InputFields, []string{"message"})
	is.Equal(echo.OutputFields, []string{"message"})
	is.True(echo.IsAsync)
	is.Equal(*echo.Description, "Return the message unchanged.")
	constant := byName["wf.std.constant"]
	is.Equal(constant.SourceID, "wf.std")
	is.True(!constant.IsAsync)                                          // built-ins run in place
	is.Equal(constant.Outcomes, []string{"ok"})                         // built-ins declare ok only
	is.Equal(byName["fake.one.fail"].OutputFields, []string{"content"}) // a tool without output schema yields content
}

func TestCapabilitiesListPagesWithCursorsUntilTheLastPage(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		is.True(page < 10) // paging terminates
		params := `{"limit":4}`
		if cursor != "" {
			params = `{"limit":4,"cursor":"` + cursor + `"}`
		}
		res := mustCall[protocol.ListCapabilitiesResult](t, f, protocol.MethodCapabilitiesList, params)
		is.Equal(res.Total, 4+len(workflow.Builtins())) // total counts every match, not the page
		is.True(len(res.Capabilities) <= 4)
		seen = append(seen, names(res.Capabilities)...)
		if res.NextCursor == nil {
			break
		}
		cursor = *res.NextCursor
	}
	all := mustCall[protocol.ListCapabilitiesResult](t, f, protocol.MethodCapabilitiesList, `{}`)
	is.Equal(seen, names(all.Capabilities)) // the pages cover the list once, in order

	first := mustCall[protocol.ListCapabilitiesResult](t, f, protocol.MethodCapabilitiesList, `{"limit":4}`)
	is.Equal(*first.NextCursor, "4")
	past := mustCall[protocol.ListCapabilitiesResult](t, f, protocol.MethodCapabilitiesList, `{"cursor":"99"}`)
	is.Equal(len(past.Capabilities), 0) // a cursor past the end is an empty page
	is.True(past.NextCursor == nil)
	is.Equal(past.Total, 4+len(workflow.Builtins()))
}

func TestCapabilitiesListFiltersByQueryAndSource(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)

	byDescription := mustCall[protocol.ListCapabilitiesResult](t, f, protocol.MethodCapabilitiesList, `{"query":"THE WEB"}`)
	is.Equal(names(byDescription.Capabilities), []string{"web.main.search"}) // the query matches descriptions, case-folded
	is.Equal(byDescription.Total, 1)

	byName := mustCall[protocol.ListCapabilitiesResult](t, f, protocol.MethodCapabilitiesList, `{"query":"counter"}`)
	is.Equal(names(byName.Capabilities), []string{"fake.one.counter"})

	bySource := mustCall[protocol.ListCapabilitiesResult](t, f, protocol.MethodCapabilitiesList, `{"source_id":"fake.one","limit":2}`)
	is.Equal(names(bySource.Capabilities), []string{"fake.one.counter", "fake.one.echo"})
	is.Equal(bySource.Total, 3) // total counts after filtering
	is.Equal(*bySource.NextCursor, "2")

	std := mustCall[protocol.ListCapabilitiesResult](t, f, protocol.MethodCapabilitiesList, `{"source_id":"wf.std"}`)
	is.Equal(len(std.Capabilities), len(workflow.Builtins())-2) // built-ins are listed by their source (wf.recipes and wf.source are their own)
	for _, c := range std.Capabilities {
		is.Equal(c.SourceID, "wf.std")
	}

	both := mustCall[protocol.ListCapabilitiesResult](t, f, protocol.MethodCapabilitiesList, `{"source_id":"fake.one","query":"search"}`)
	is.Equal(len(both.Capabilities), 0) // filters combine
	is.Equal(both.Total, 0)
	is.True(both.NextCursor == nil)

	disabled := mustCall[protocol.ListCapabilitiesResult](t, f, protocol.MethodCapabilitiesList, `{"source_id":"fake.off"}`)
	is.Equal(disabled.Total, 0) // a disabled connection's tools are hidden even when asked for

	hidden := mustCall[protocol.ListCapabilitiesResult](t, f, protocol.MethodCapabilitiesList, `{"query":"hidden"}`)
	is.Equal(hidden.Total, 0) // and do not match a query
}

func TestCapabilitiesListRejectsABadCursorOrLimit(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	for _, params := range []string{`{"cursor":"abc"}`, `{"cursor":"-1"}`, `{"cursor":"1.5"}`, `{"limit":0}`} {
		_, err := f.call(t, protocol.MethodCapabilitiesList, params)
		msg := domainError(t, err, "ValueError")
		is.True(msg != "") // params
	}
	_, err := f.call(t, protocol.MethodCapabilitiesList, `{"cursor":"abc"}`)
	is.True(strings.Contains(domainError(t, err, "ValueError"), `"abc"`)) // the message names the bad cursor

	_, err = f.call(t, protocol.MethodCapabilitiesList, `{"page":2}`)
	invalidParams(t, err) // unknown keys are invalid params
}

func TestCapabilitiesInspectDescribesOneCapability(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	d := mustCall[protocol.CapabilityDetail](t, f, protocol.MethodCapabilitiesInspect, `{"qualified_name":"fake.one.echo"}`)
	is.Equal(d.Name, "fake.one.echo")
	is.Equal(d.SourceID, "fake.one")
	is.Equal(d.Kind, "node_spec")
	is.Equal(d.InputSchema["required"], []any{"message"}) // the tool's own input schema
	is.Equal(d.WrapperHints.CapabilityName, "fake.one.echo")
	is.Equal(d.WrapperHints.InputMap, map[string]string{"input.message": "message"})

	b := mustCall[protocol.CapabilityDetail](t, f, protocol.MethodCapabilitiesInspect, `{"qualified_name":"wf.std.runtime_error"}`)
	is.Equal(b.SourceID, "wf.std") // built-ins can be inspected
	is.True(!b.IsAsync)
}

func TestCapabilitiesInspectOfAnUnknownOrHiddenNameIsAKeyError(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	_, err := f.call(t, protocol.MethodCapabilitiesInspect, `{"qualified_name":"fake.one.nope"}`)
	is.True(strings.Contains(domainError(t, err, "KeyError"), "fake.one.nope")) // the message names the capability
	_, err = f.call(t, protocol.MethodCapabilitiesInspect, `{"qualified_name":"fake.off.hidden_tool"}`)
	domainError(t, err, "KeyError") // a disabled connection's tool does not exist for workflows
}

func TestCapabilitiesListOfAnUnknownSourceIsAKeyError(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	_, err := f.call(t, protocol.MethodCapabilitiesList, `{"source_id":"nope.nope"}`)
	is.True(strings.Contains(domainError(t, err, "KeyError"), "nope.nope")) // not an empty list
	off := mustCall[protocol.ListCapabilitiesResult](t, f, protocol.MethodCapabilitiesList, `{"source_id":"fake.off"}`)
	is.Equal(off.Total, 0) // a known, disabled source lists nothing
}
