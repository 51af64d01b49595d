package config_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

func conn(id, command, ownership string) config.Connection {
	return config.Connection{Kind: "mcp", ID: id, Ownership: ownership, Transport: config.Transport{Kind: config.TransportStdio, Command: command}}
}

func ids(conns []config.Connection) []string {
	out := []string{}
	for _, c := range conns {
		out = append(out, c.ID)
	}
	return out
}

func TestMergeAppliesOwnership(t *testing.T) {
	is := is.New(t)
	configured := []config.Connection{
		conn("lock.one", "config", ""), // locked by default
		conn("lock.two", "config", config.OwnershipLocked),
		conn("seed.one", "config", config.OwnershipSeed),
		conn("seed.two", "config", config.OwnershipSeed),
	}
	registered := []config.Connection{
		conn("zreg.only", "registry", ""),
		conn("lock.one", "registry", ""),
		conn("seed.one", "registry", ""),
	}
	m := config.Merge(configured, registered)
	is.Equal(ids(m.Connections), []string{"lock.one", "lock.two", "seed.one", "seed.two", "zreg.only"}) // sorted by id
	command := map[string]string{}
	for _, c := range m.Connections {
		command[c.ID] = c.Transport.Command
	}
	is.Equal(command, map[string]string{
		"lock.one":  "config",   // a locked id ignores its registry entry
		"lock.two":  "config",   // locked without an entry
		"seed.one":  "registry", // the registry entry wins over a seed
		"seed.two":  "config",   // a seed the registry lacks
		"zreg.only": "registry", // registry-only
	})
	is.Equal(m.Shadowed, []string{"lock.one"})
	is.Equal(m.SeedEntryWins, []string{"seed.one"})
	is.Equal(ids(m.Seeds), []string{"seed.two"})
	is.Equal(m.Connections[2].Ownership, config.OwnershipSeed) // the winning entry keeps the seed ownership
	is.Equal(registered[2].Ownership, "")                      // the inputs are not modified
}

func TestViewSwapsTheEffectiveSetAndKeepsTheConfigured(t *testing.T) {
	is := is.New(t)
	v := config.NewView([]config.Connection{conn("b.b", "x", ""), conn("a.a", "x", config.OwnershipSeed)})
	is.Equal(ids(v.Configured()), []string{"a.a", "b.b"})
	is.Equal(ids(v.All()), []string{"a.a", "b.b"})
	before, version := v.All(), v.Version()

	v.Set([]config.Connection{conn("c.c", "x", ""), conn("a.a", "y", "")})
	is.Equal(ids(v.All()), []string{"a.a", "c.c"})
	is.True(v.Version() != version)               // what was derived from the earlier set is stale
	is.Equal(ids(before), []string{"a.a", "b.b"}) // an earlier snapshot does not change
	got, ok := v.Get("a.a")
	is.True(ok)
	is.Equal(got.Transport.Command, "y")
	_, ok = v.Get("b.b")
	is.True(!ok)
	cfg, ok := v.ConfiguredByID("b.b")
	is.True(ok) // the configured set stays
	is.True(cfg.IsLocked())

	var wg sync.WaitGroup // readers never race a Set (go test -race)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if i%2 == 0 {
					v.Set([]config.Connection{conn("a.a", "z", "")})
				} else {
					_, _ = v.Get("a.a")
					_ = len(v.All())
				}
			}
		}()
	}
	wg.Wait()
}

func TestParseChecksOwnershipAndTransportFields(t *testing.T) {
	is := is.New(t)
	for _, tc := range []struct{ source, want string }{
		{`{"kind":"mcp","id":"a.b","ownership":"managed","transport":{"kind":"stdio","command":"x"}}`, "ownership"},
		{`{"kind":"mcp","id":"a.b","transport":{"kind":"stdio","command":"x","headers":{"H":"v"}}}`, "no url or headers"},
		{`{"kind":"mcp","id":"a.b","transport":{"kind":"http","url":"https://x.test","env":{"K":"v"}}}`, "no command, args, env or cwd"},
	} {
		_, err := config.Parse([]byte(withSource(tc.source)))
		is.True(err != nil)
		if !strings.Contains(err.Error(), tc.want) {
			t.Logf("%s: %v", tc.source, err)
			is.Fail() // the error says what is wrong
		}
	}
	f, err := config.Parse([]byte(withSource(`{"kind":"mcp","id":"a.b","ownership":"seed","profile":"work","transport":{"kind":"stdio","command":"x"}}`)))
	is.NoErr(err)
	c := f.Connections()[0]
	is.True(!c.IsLocked())
	is.Equal(*c.Profile, "work")
	is.True(config.IsReserved("wf.mcp"))
	is.True(!config.IsReserved("wf.custom"))
}
