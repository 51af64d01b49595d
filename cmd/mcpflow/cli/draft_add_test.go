package cli

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/spf13/cobra"

	p "github.com/mcpflow/mcpflow/api/protocol"
)

// addParams parses `draft add KIND argv...` as the command line would and
// answers the params it would send.
func addParams(t *testing.T, kind string, argv ...string) (any, error) {
	t.Helper()
	i := slices.IndexFunc(stepKinds, func(k stepKind) bool { return k.name == kind })
	is.New(t).True(i >= 0) // a kind of the language
	cmd, s := newStepCommand(stepKinds[i])
	is.New(t).NoErr(cmd.ParseFlags(argv))
	return s.params(stepKinds[i], cmd.Flags().Args())
}

// stepJSON is the step of add_step params, as compact JSON.
func stepJSON(t *testing.T, params any, err error) string {
	t.Helper()
	is := is.New(t)
	is.NoErr(err)
	add, ok := params.(p.AddStepParams)
	is.True(ok) // add_step params
	var buf bytes.Buffer
	is.NoErr(json.Compact(&buf, add.Step))
	return buf.String()
}

func TestAddStepFlagsBuildEachKind(t *testing.T) {
	is := is.New(t)
	for _, tc := range []struct {
		kind string
		argv []string
		want string
	}{
		{"when", []string{"ws", "check", "--if", "input.urgent == true", "--then", "ask"},
			`{"when":{"if":{"op":"eq","left":{"path":"input.urgent"},"right":{"value":true}},"otherwise":"__end__","then":"ask"}}`},
		{"when", []string{"ws", "check", "--if", `{"op":"exists","path":"input.x"}`, "--then", "a", "--otherwise", "b"},
			`{"when":{"if":{"op":"exists","path":"input.x"},"otherwise":"b","then":"a"}}`},
		{"choose", []string{"ws", "how", "--clause", "exists input.email => by_email", "--clause", "input.n >= 5=>big", "--default", "by_hand"},
			`{"choose":{"clauses":[{"if":{"op":"exists","path":"input.email"},"then":"by_email"},{"if":{"op":"ge","left":{"path":"input.n"},"right":{"value":5}},"then":"big"}],"default":"by_hand"}}`},
		{"match", []string{"ws", "kind", "--value", "input.kind", "--case", "bug=fix", "--case", "a=b=odd", "--case", "3=three"},
			`{"match":{"cases":[{"equals":"bug","then":"fix"},{"equals":"a=b","then":"odd"},{"equals":3,"then":"three"}],"default":"__end__","value":"input.kind"}}`},
		{"foreach", []string{"ws", "each", "--over", "input.tags", "--as", "tag", "--mode", "concurrent", "--max-active", "2", "--item-error", "collect:state.errors"},
			`{"foreach":{"as":"tag","concurrent":{"max_active":2},"item_error":{"action":"collect","collect_to":"state.errors"},"mode":"concurrent","over":"input.tags"}}`},
		{"foreach", []string{"ws", "each", "--over", "input.tags", "--as", "tag", "--item-error", "skip"},
			`{"foreach":{"as":"tag","item_error":"skip","over":"input.tags"}}`},
		{"join", []string{"ws", "meet"}, `{"join":{}}`},
		{"end", []string{"ws", "no", "--outcome", "rejected"}, `{"end":{"outcome":"rejected"}}`},
		{"end", []string{"ws", "done"}, `{"end":{"outcome":"ok"}}`},
		{"interrupt", []string{"ws", "ask", "--kind", "approval", "--request-value", "message=Ship it?", "--request-in", "title=input.title",
			"--resume", "state.approved=approved", "--resume-schema", `{"type":"object"}`, "--outcomes", "submitted,rejected"},
			`{"interrupt":{"kind":"approval","outcomes":["submitted","rejected"],"request":[{"target":"title","path":"input.title"},{"target":"message","value":"Ship it?"}],"resume":[{"source":"approved","target":"state.approved"}],"resume_schema":{"type":"object"}}}`},
		{"subgraph", []string{"ws", "sum", "--workflow", "summarize_note@3", "--in", "text=input.notes", "--out", "state.digest=summary"},
			`{"subgraph":{"input":[{"target":"text","path":"input.notes"}],"output":[{"source":"summary","target":"state.digest"}],"workflow":{"artifact_id":"summarize_note","version":3}}}`},
		{"subgraph", []string{"ws", "sum", "--workflow", "child", "--value", `n={"a":[1]}`},
			`{"subgraph":{"input":[{"target":"n","value":{"a":[1]}}],"output":[],"workflow":{"name":"child"}}}`},
	} {
		params, err := addParams(t, tc.kind, tc.argv...)
		got := stepJSON(t, params, err)
		if got != tc.want {
			t.Logf("%s %v:\n got %s\nwant %s", tc.kind, tc.argv, got, tc.want)
		}
		is.Equal(got, tc.want) // the flags make the step the language defines
	}
}

func TestAddStepRoutesAndAfter(t *testing.T) {
	is := is.New(t)
	params, err := addParams(t, "foreach", "ws", "each", "--over", "input.tags", "--as", "tag", "--route", "loop=say", "--route", "done=__end__", "--after", "start:found")
	is.NoErr(err)
	add := params.(p.AddStepParams)
	is.Equal(add.WorkspaceID, "ws")
	is.Equal(add.StepID, "each")
	is.Equal(add.Routes, map[string]string{"loop": "say", "done": "__end__"})
	is.Equal(*add.Incoming, p.RouteSource{StepID: "start", Outcome: "found"})

	params, err = addParams(t, "join", "ws", "meet", "--after", "warm")
	is.NoErr(err)
	is.Equal(*params.(p.AddStepParams).Incoming, p.RouteSource{StepID: "warm"}) // the server's default outcome, ok
}

func TestAddUseStepMapsToAddStepFromCapability(t *testing.T) {
	is := is.New(t)
	params, err := addParams(t, "use", "ws", "say", "demo.default.echo", "--in", "message=context.tag", "--value", "loud=true",
		"--out", "state.echoes=message", "--route", "ok=each", "--route", "error=each", "--after", "each:loop", "--retry", "0", "--timeout-seconds", "5", "--desc", "say it")
	is.NoErr(err)
	use := params.(p.AddStepFromCapabilityParams)
	is.Equal(use.CapabilityName, "demo.default.echo")
	is.Equal(use.StepID, "say")
	data, err := json.Marshal(use.InputBindings)
	is.NoErr(err)
	is.Equal(string(data), `[{"target":"message","path":"context.tag"},{"target":"loud","value":true}]`)
	is.Equal(use.BindOutputs, map[string]string{"message": "state.echoes"}) // local source → state path
	is.Equal(use.Routes, map[string]string{"ok": "each", "error": "each"})
	is.Equal(*use.RouteFromStep, "each")
	is.Equal(*use.RouteFromOutcome, "loop")
	is.Equal(*use.Retry, 0) // --retry 0 is said, not left out
	is.Equal(*use.TimeoutSeconds, 5)
	is.Equal(*use.Desc, "say it")

	params, err = addParams(t, "use", "ws", "c", "demo.default.counter")
	is.NoErr(err)
	bare := params.(p.AddStepFromCapabilityParams)
	is.True(bare.InputBindings == nil && bare.BindOutputs == nil && bare.Retry == nil && bare.RouteFromStep == nil) // nothing asked, nothing sent
	data, err = json.Marshal(bare)
	is.NoErr(err)
	is.Equal(string(data), `{"workspace_id":"ws","revision":0,"step_id":"c","capability_name":"demo.default.counter"}`)
}

func TestAddStepRefusesBadFlags(t *testing.T) {
	is := is.New(t)
	for _, tc := range []struct {
		kind string
		argv []string
		want string
	}{
		{"when", []string{"ws", "s", "--then", "a"}, "--if and --then are required"},
		{"when", []string{"ws", "s", "--if", "input.a is 3", "--then", "a"}, `want JSON, "exists PATH"`},
		{"when", []string{"ws", "s", "--if", "{not json", "--then", "a"}, "not a JSON object"},
		{"choose", []string{"ws", "s"}, "at least one --clause"},
		{"choose", []string{"ws", "s", "--clause", "exists input.a"}, "want 'CONDITION => STEP'"},
		{"match", []string{"ws", "s", "--value", "input.k", "--case", "nothing"}, "want KEY=VALUE"},
		{"foreach", []string{"ws", "s", "--over", "input.x"}, "--over and --as are required"},
		{"foreach", []string{"ws", "s", "--over", "input.x", "--as", "x", "--item-error", "collect:"}, "want fail, skip or collect:STATEPATH"},
		{"foreach", []string{"ws", "s", "--over", "input.x", "--as", "x", "--route", "loop=a", "--route", "loop=b"}, "loop given twice"},
		{"interrupt", []string{"ws", "s"}, "--kind is required"},
		{"interrupt", []string{"ws", "s", "--kind", "k", "--resume-schema", "[1]"}, "--resume-schema: not a JSON object"},
		{"interrupt", []string{"ws", "s", "--kind", "k", "--resume", "approved"}, "--resume \"approved\": want KEY=VALUE"},
		{"subgraph", []string{"ws", "s"}, "--workflow is required"},
		{"subgraph", []string{"ws", "s", "--workflow", "x@zero"}, "want ARTIFACT@VERSION"},
		{"use", []string{"ws", "s", "c", "--in", "=input.a"}, "want KEY=VALUE"},
		{"use", []string{"ws", "s", "c", "--expr", "q={bad"}, "--expr q"},
	} {
		_, err := addParams(t, tc.kind, tc.argv...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Logf("%s %v: %v, want %q", tc.kind, tc.argv, err, tc.want)
		}
		is.True(err != nil && strings.Contains(err.Error(), tc.want)) // a clear error, before connecting
	}
}

func TestParseConditionShortForms(t *testing.T) {
	is := is.New(t)
	for in, want := range map[string]string{
		"exists input.email":     `{"op":"exists","path":"input.email"}`,
		"!exists state.done":     `{"op":"not","arg":{"op":"exists","path":"state.done"}}`,
		"input.n >= 5":           `{"op":"ge","left":{"path":"input.n"},"right":{"value":5}}`,
		"input.n > 5":            `{"op":"gt","left":{"path":"input.n"},"right":{"value":5}}`,
		"input.n <= state.max":   `{"op":"le","left":{"path":"input.n"},"right":{"path":"state.max"}}`,
		"input.kind != bug":      `{"op":"ne","left":{"path":"input.kind"},"right":{"value":"bug"}}`,
		`input.kind == "a b"`:    `{"op":"eq","left":{"path":"input.kind"},"right":{"value":"a b"}}`,
		"context.loop_index < 2": `{"op":"lt","left":{"path":"context.loop_index"},"right":{"value":2}}`,
		"input.x == null":        `{"op":"eq","left":{"path":"input.x"},"right":{"value":null}}`,
	} {
		got, err := parseCondition(in)
		is.NoErr(err)
		if string(got) != want {
			t.Logf("%q: got %s, want %s", in, got, want)
		}
		is.Equal(string(got), want)
	}
	for _, bad := range []string{"", "input.n", "input.n >=", "== 3", "input.a =3"} {
		_, err := parseCondition(bad)
		is.True(err != nil) // refused with the forms it takes
	}
}

func TestLineDiffShowsChangesWithContext(t *testing.T) {
	is := is.New(t)
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	b := "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n12\n13\n"
	var buf bytes.Buffer
	writeLineDiff(&buf, "theirs", "yours", a, b)
	is.Equal(buf.String(), "--- theirs\n+++ yours\n…\n  3\n  4\n- 5\n+ five\n  6\n  7\n…\n  11\n  12\n+ 13\n")
	buf.Reset()
	writeLineDiff(&buf, "a", "b", "same\n", "same\n")
	is.Equal(buf.String(), "--- a\n+++ b\n…\n") // nothing changed, nothing shown
}

func TestStepUpdateSendsWhatIsGivenAndNullForWhatIsRemoved(t *testing.T) {
	is := is.New(t)
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"--retry", "0"}, `{"retry":0}`},
		{[]string{"--desc", "say it", "--no-retry", "--no-timeout"}, `{"desc":"say it","retry":null,"timeout_seconds":null}`},
		{[]string{"--timeout-seconds", "5", "--in", "message=context.tag"}, `{"input":[{"target":"message","path":"context.tag"}],"timeout_seconds":5}`},
	} {
		cmd := &cobra.Command{}
		var u stepUpdate
		u.addFlags(cmd)
		is.NoErr(cmd.ParseFlags(tc.argv))
		up, err := u.update(cmd)
		is.NoErr(err)
		data, err := json.Marshal(up)
		is.NoErr(err)
		is.Equal(string(data), tc.want) // only what the flags say
	}
	cmd := &cobra.Command{}
	var u stepUpdate
	u.addFlags(cmd)
	_, err := u.update(cmd)
	is.True(err != nil && strings.Contains(err.Error(), "give what to change")) // an empty update is refused before the server
}

func TestMergeTakesPathBindingsOnly(t *testing.T) {
	is := is.New(t)
	in := inputFlags{in: []string{"title=input.title", "key=input.key"}}
	m, err := in.pathMap()
	is.NoErr(err)
	is.Equal(m, map[string]string{"input.title": "title", "input.key": "key"}) // graph path → target, as the map methods take
	_, err = (&inputFlags{in: []string{"a=input.x"}, value: []string{"b=1"}}).pathMap()
	is.True(err != nil) // a map has no room for a literal
	_, err = (&inputFlags{in: []string{"a=input.x", "b=input.x"}}).pathMap()
	is.True(err != nil) // nor for one path read twice
}

func TestEveryDraftCommandHasAnExample(t *testing.T) {
	is := is.New(t)
	var visit func(cmd *cobra.Command)
	count := 0
	visit = func(cmd *cobra.Command) {
		if cmd.Example == "" {
			t.Logf("%s has no example", cmd.CommandPath())
		}
		is.True(cmd.Example != "") // --help shows one
		count++
		for _, sub := range cmd.Commands() {
			visit(sub)
		}
	}
	visit(newDraftCommand(&remote{}))
	t.Logf("%d draft commands", count)
	is.True(count >= 40) // the group, its commands and the nine kinds
}
