package integration

// `mcpflow run --follow` (issue 10) as a person sees it: the real binary
// under a pseudo-terminal, against a real server, on a multi-step run
// whose steps take long enough to watch; and the same piped.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/matryer/is"
)

// followSource is the fakemcp connection the follow tests' workflow calls.
const followSource = "follow.fake"

// followWait bounds a followed run, from start to exit.
const followWait = 60 * time.Second

// napsDraft sleeps 400 ms, then once per item of input.naps (one at a
// time) that many ms, then 300 ms; its output is the last sleep's result.
var napsDraft = fmt.Sprintf(`{"name":"follow_naps","start":"first","outcomes":["ok"],
	"input_schema":{"type":"object","properties":{"naps":{"type":"array"}},"required":["naps"]},
	"state_schema":{"type":"object","properties":{"last":{}}},
	"output_schema":{"type":"object","properties":{"last":{}}},
	"output":[{"target":"last","path":"state.last"}],
	"steps":{
		"first":{"use":%[1]q,"input":[{"target":"ms","value":400}]},
		"each":{"foreach":{"over":"input.naps","as":"nap"}},
		"nap":{"use":%[1]q,"input":[{"target":"ms","path":"context.nap"}]},
		"last":{"use":%[1]q,"input":[{"target":"ms","value":300}],"output":[{"source":".","target":"state.last"}]}},
	"routes":{"first":{"ok":"each","error":"__end__"},"each":{"loop":"nap","done":"last"},
		"nap":{"ok":"each","error":"each"},"last":{"ok":"__end__","error":"__end__"}}}`, followSource+".sleep")

// followCommand is `mcpflow run --follow` of the naps workflow on a fresh
// server, and a client of that server.
func followCommand(t *testing.T, ctx context.Context) (*exec.Cmd, *service) {
	t.Helper()
	svc := startService(t, nil, stdioSource(followSource, fakeMCP))
	dep := deployDraft(t, svc.dial(t), "follow_naps", napsDraft, followSource)
	return exec.CommandContext(ctx, binary, "run", dep, "--follow", "--url", svc.URL, "--input", `{"naps":[200,200,200]}`), svc
}

// runIDLine is the live view's first line, naming the run.
var runIDLine = regexp.MustCompile(`run (run_[0-9a-f]+): running`)

// TestFollowInATerminalUpdatesLive runs `mcpflow run --follow` under a
// pty, reading its screen as it comes: the first step's line shows while
// the run is still running (asked through a second client), the status
// line is redrawn in place (carriage return and erase line) with the
// foreach's items counted, and the end shows the status, outcome and
// output.
func TestFollowInATerminalUpdatesLive(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), followWait)
	defer cancel()
	cmd, svc := followCommand(t, ctx)
	term := startPTY(t, ctx, cmd, &pty.Winsize{Rows: 40, Cols: 100})
	screen, read := &term.screen, term.read
	read(func(s string) bool { return strings.Contains(s, "first: ok in ") }, "line for the first step")
	firstAt, firstSeen := time.Now(), screen.String()
	m := runIDLine.FindStringSubmatch(firstSeen)
	is.True(m != nil) // the view names the run
	run, err := svc.dial(t).InspectRun(ctx, m[1])
	is.NoErr(err)
	is.Equal(run.Status, "running")                   // the first step showed while the run went on
	is.True(strings.Contains(firstSeen, "\r\x1b[2K")) // the status line is redrawn in place

	read(func(s string) bool { return strings.Contains(s, "output:") && strings.HasSuffix(s, "}\r\n") }, "output")
	ahead := time.Since(firstAt)
	is.NoErr(term.wait()) // a completed run exits 0, after the run's end
	out := screen.String()
	t.Logf("the screen, as written:\n%q", out)
	for _, want := range []string{
		"first: ok in ",
		"nap [each#0]: ok in ", "(each: 1 done, 0 running)",
		"nap [each#2]: ok in ", "(each: 3 done, 0 running)",
		"each: done at ", "last: ok in ",
		"run " + m[1] + ": completed, outcome ok, in ",
		"output:\r\n{\r\n  \"last\": {\r\n    \"slept_ms\": 300\r\n  }\r\n}\r\n",
	} {
		is.True(strings.Contains(out, want)) // every step, the foreach's items and the end
	}
	is.True(strings.Contains(out, "| running ") && strings.Contains(out, "each: 0 done, 1 running")) // the status line's running steps and items
	redraws := strings.Count(out, "\r\x1b[2K")
	is.True(redraws >= 10)                                                    // redrawn as each event came
	is.True(!strings.Contains(out, ": started ("))                            // starts only show on the status line
	is.True(strings.Index(out, "first: ok") < strings.Index(out, "last: ok")) // in the order they ran
	t.Logf("run %s: the first step's line showed while it was %s, %s before the output; %d redraws of the status line", m[1], run.Status, ahead.Round(time.Millisecond), redraws)
}

// TestFollowPipedPrintsPlainLines runs `mcpflow run --follow` with its
// output piped: one plain line an event, no escape code, the same end.
func TestFollowPipedPrintsPlainLines(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), followWait)
	defer cancel()
	cmd, _ := followCommand(t, ctx)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outBytes, err := cmd.Output()
	if err != nil {
		t.Logf("stderr: %s", stderr.String())
	}
	var exit *exec.ExitError
	is.True(!errors.As(err, &exit)) // exit 0
	is.NoErr(err)
	out := string(outBytes)
	t.Logf("piped output:\n%s", out)
	is.True(!strings.ContainsAny(out, "\x1b\r")) // no escape codes, no carriage returns
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	is.True(runIDLine.MatchString(lines[0])) // the run, first
	is.Equal(lines[1], "first: started (follow.fake.sleep)")
	is.True(strings.HasPrefix(lines[2], "first: ok in "))
	is.Equal(lines[3], "each: item 0 started (each: 0 done, 1 running)")
	is.Equal(lines[4], "nap [each#0]: started (follow.fake.sleep)")
	is.True(strings.HasPrefix(lines[5], "nap [each#0]: ok in ") && strings.HasSuffix(lines[5], " (each: 1 done, 0 running)"))
	is.True(strings.Contains(out, "\neach: done at "))
	is.True(strings.Contains(out, "\nlast: started (follow.fake.sleep)\nlast: ok in "))
	is.True(strings.Contains(out, ": completed, outcome ok, in "))
	is.True(strings.HasSuffix(out, "output:\n{\n  \"last\": {\n    \"slept_ms\": 300\n  }\n}\n")) // the output, last
}
