package config_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

func TestClientBlockKeepsItsDefaultsUnlessSet(t *testing.T) {
	is := is.New(t)
	f, err := config.Parse([]byte(withSource(`{"kind":"mcp","id":"a.b","transport":{"kind":"stdio","command":"x"}}`)))
	is.NoErr(err)
	c := f.Connections()[0].Client
	is.Equal(c.ElicitationPolicy(), config.PolicyInterrupt)
	is.Equal(c.SamplingPolicy(), config.PolicyRefuse)
	is.Equal(c.Level(), "info")
	is.Equal(len(c.RootList()), 0)

	f, err = config.Parse([]byte(withSource(`{"kind":"mcp","id":"a.b","transport":{"kind":"stdio","command":"x"},
		"client":{"elicitation":"refuse","sampling":"interrupt","roots":[{"uri":"file:///srv/repo","name":"repo"}],"log_level":"warning"}}`)))
	is.NoErr(err)
	c = f.Connections()[0].Client
	is.Equal(c.ElicitationPolicy(), config.PolicyRefuse)
	is.Equal(c.SamplingPolicy(), config.PolicyInterrupt)
	is.Equal(c.Level(), "warning")
	is.Equal(c.RootList(), []config.Root{{URI: "file:///srv/repo", Name: "repo"}})
}

func TestClientBlockRefusesWhatIsWrongByName(t *testing.T) {
	is := is.New(t)
	for _, tc := range []struct{ client, want string }{
		{`{"elicitation":"ask"}`, `client.elicitation must be "interrupt" or "refuse", got "ask"`},
		{`{"sampling":"yes"}`, `client.sampling must be "refuse", "interrupt" or "client", got "yes"`},
		{`{"log_level":"verbose"}`, `client.log_level must be one of [debug info notice warning error critical alert emergency]`},
		{`{"roots":[{"uri":"https://x.test/repo"}]}`, `client.roots[0]: uri "https://x.test/repo" must be an absolute file:// URI`},
		{`{"roots":[{"name":"n"}]}`, `client.roots[0]: uri is required`},
		{`{"roots":[{"uri":"file:///a"},{"uri":"file:///a"}]}`, `client.roots[1]: uri "file:///a" is listed twice`},
		{`{"rootz":[]}`, `rootz`},
	} {
		_, err := config.Parse([]byte(withSource(`{"kind":"mcp","id":"a.b","transport":{"kind":"stdio","command":"x"},"client":` + tc.client + `}`)))
		is.True(err != nil)
		if !strings.Contains(err.Error(), tc.want) {
			t.Logf("%s: %v", tc.client, err)
			is.Fail() // the error says what is wrong
		}
	}
}
