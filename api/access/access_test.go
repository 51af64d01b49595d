package access_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/api/access"
	"github.com/mcpflow/mcpflow/api/jsonrpc"
)

var tokens = []config.Token{
	{Name: "reader", Token: "r-0123456789abcdef", Scopes: []string{"read"}},
	{Name: "runner", Token: "x-0123456789abcdef", Scopes: []string{"read", "run"}},
	{Name: "root", Token: "a-0123456789abcdef", Scopes: []string{"admin"}},
}

func TestWithoutTokensEveryRequestIsAnonymousAndMayDoAnything(t *testing.T) {
	is := is.New(t)
	g := access.NewGuard(nil)
	is.True(!g.Enabled())
	p, ok := g.Authenticate("")
	is.True(ok)
	is.Equal(p.Name, "anonymous")
	for _, s := range []access.Scope{access.Read, access.Run, access.Author, access.Admin} {
		is.True(p.Allows(s))
	}
}

func TestATokenGrantsItsScopesAndAdminGrantsAll(t *testing.T) {
	is := is.New(t)
	g := access.NewGuard(tokens)
	is.True(g.Enabled())

	_, ok := g.Authenticate("")
	is.True(!ok) // no token
	_, ok = g.Authenticate("r-0123456789abcdeX")
	is.True(!ok) // a near miss

	reader, ok := g.Authenticate("r-0123456789abcdef")
	is.True(ok)
	is.Equal(reader.Name, "reader")
	is.True(reader.Allows(access.Read))
	is.True(!reader.Allows(access.Run))

	runner, _ := g.Authenticate("x-0123456789abcdef")
	is.True(runner.Allows(access.Run))
	is.True(!runner.Allows(access.Author))

	root, _ := g.Authenticate("a-0123456789abcdef")
	for _, s := range []access.Scope{access.Read, access.Run, access.Author, access.Admin} {
		is.True(root.Allows(s))
	}
}

func TestTokenComesFromTheAuthorizationHeaderOrTheSubprotocol(t *testing.T) {
	is := is.New(t)
	r, err := http.NewRequest(http.MethodGet, "http://127.0.0.1/ws", nil)
	is.NoErr(err)
	is.Equal(access.Token(r), "")
	r.Header.Set("Sec-WebSocket-Protocol", "other, "+access.SubprotocolPrefix+"from-browser")
	is.Equal(access.Token(r), "from-browser")
	r.Header.Set("Authorization", "bearer from-header")
	is.Equal(access.Token(r), "from-header") // the header wins
	r.Header.Set("Authorization", "Basic dXNlcjpwdw==")
	is.Equal(access.Token(r), "from-browser") // not a bearer token
}

func TestRefusalsNameWhatIsMissingAndNeverTheToken(t *testing.T) {
	is := is.New(t)
	is.Equal(access.Unauthenticated("").Code, jsonrpc.Unauthenticated)
	wrong := access.Unauthenticated("s3cr3t-wrong-token")
	is.Equal(wrong.Code, jsonrpc.Unauthenticated)
	is.True(!strings.Contains(wrong.Data.(jsonrpc.ErrorData).Message, "s3cr3t"))
	reader, _ := access.NewGuard(tokens).Authenticate("r-0123456789abcdef")
	f := access.Forbidden(reader, "workflow.runs.start", access.Run)
	is.Equal(f.Code, jsonrpc.Forbidden)
	is.Equal(f.Data.(jsonrpc.ErrorData).Message, `forbidden: workflow.runs.start needs scope "run", which token "reader" does not have`)
}

func TestWhatAnyValidTokenMayCallEveryTokenMay(t *testing.T) {
	is := is.New(t)
	g := access.NewGuard([]config.Token{{Name: "reader", Token: "read-token-0123456789", Scopes: []string{"read"}, MCPDeployments: []string{"billing_*"}}})
	p, ok := g.Authenticate("read-token-0123456789")
	is.True(ok)
	is.True(p.Allows(access.Any))
	is.True(!p.Allows(access.Run))
	is.Equal(p.Scopes(), []access.Scope{access.Read})
	is.Equal(p.Deployments(), []string{"billing_*"})
	is.True(p.SeesDeployment("billing_eu.default") && !p.SeesDeployment("deploy.default"))
	is.Equal(access.Anonymous.Scopes(), []access.Scope{access.Read, access.Run, access.Author, access.Admin})
	is.True(access.Anonymous.IsAnonymous() && !p.IsAnonymous())
}
