package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

func TestTailKeepsTheLastNonBlankLinesWithinItsBounds(t *testing.T) {
	is := is.New(t)
	tl := newTail()
	for i := range 15 {
		tl.add(fmt.Sprintf("line %d", i))
		tl.add("   ") // blank lines say nothing
	}
	tl.end()
	lines := strings.Split(tl.text(time.Second), "\n")
	is.Equal(len(lines), stderrTailLines)
	is.Equal(lines[0], "line 5")
	is.Equal(lines[len(lines)-1], "line 14")

	long := newTail()
	for range 6 {
		long.add(strings.Repeat("é", stderrLineBytes)) // 2 bytes each: cut
	}
	long.end()
	text := long.text(time.Second)
	is.True(len(text) <= stderrTailBytes)
	for _, l := range strings.Split(text, "\n") {
		is.True(strings.HasSuffix(l, "…"))          // a cut line says so
		is.True(strings.HasPrefix(l, "é"))          // cut on a rune boundary
		is.True(len(l) <= stderrLineBytes+len("…")) // each line bounded
	}
}

func TestTailWaitsForStderrToEndOnlyWithinItsBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		tl := newTail()
		tl.add("still writing")
		start := time.Now()
		is.Equal(tl.text(20*time.Millisecond), "still writing") // what it has, after the wait
		is.Equal(time.Since(start), 20*time.Millisecond)        // the whole bound, no more (the bubble's clock)
	})
}

func TestStderrIsRedactedAsAStatusIs(t *testing.T) {
	is := is.New(t)
	conn := config.Connection{ID: "x.one", Transport: config.Transport{Env: map[string]string{"API_KEY": "conf1gured-secret", "DEBUG": "1"}}}
	clean := stderrRedactor(conn, map[string]string{"TOKEN": "au7h"})
	is.Equal(clean("key conf1gured-secret token au7h at https://u:p@host/x?sig=abc, 1 retry"),
		"key [redacted] token [redacted] at https://[redacted]@host/x?[redacted] 1 retry")
}

func TestAConnectErrorQuotesTheStderrOnlyWhenThereIsSome(t *testing.T) {
	is := is.New(t)
	cause := errors.New(`calling "initialize": EOF`)
	is.Equal(withStderr(cause, nil), cause) // not a stdio transport
	st := &stdioTransport{stderr: newTail()}
	is.Equal(withStderr(cause, st), cause) // never started: nothing to quote
}

func TestTailFoldsStackFramesSoTheErrorStaysInView(t *testing.T) {
	is := is.New(t)
	tl := newTail()
	for _, l := range strings.Split(`[eval]:1
require('./nope.js')
^

Error: Cannot find module './nope.js'
Require stack:
- /srv/[eval]
    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)
    at Module._load (node:internal/modules/cjs/loader:1038:27)
    at Module.require (node:internal/modules/cjs/loader:1289:19)
    at require (node:internal/modules/helpers:182:18)
    at [eval]:1:1
    at runScriptInThisContext (node:internal/vm:209:10)
    at node:internal/process/execution:118:14 {
  code: 'MODULE_NOT_FOUND',
  requireStack: [ '/srv/[eval]' ]
}

Node.js v20.20.2`, "\n") {
		tl.add(l)
	}
	tl.end()
	is.Equal(tl.text(time.Second), `^
Error: Cannot find module './nope.js'
Require stack:
- /srv/[eval]
    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)
    at … (6 more)
  code: 'MODULE_NOT_FOUND',
  requireStack: [ '/srv/[eval]' ]
}
Node.js v20.20.2`)
}
