package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

func TestAccessTokensComeInlineAndFromATokenFile(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	is.NoErr(os.WriteFile(filepath.Join(dir, "tokens.json"),
		[]byte(`{"tokens":[{"name":"ci","token":"ci-0123456789abcdef","scopes":["read","run"]}]}`), 0o600))
	a := &config.Access{TokenFile: "tokens.json", Tokens: []config.Token{{Name: "ops", Token: "ops-0123456789abcdef", Scopes: []string{"admin"}}}}
	is.NoErr(a.Validate())
	tokens, err := a.AllTokens(dir)
	is.NoErr(err)
	is.Equal(len(tokens), 2)
	is.Equal(tokens[1].Name, "ci")
}

func TestAccessRefusesWeakDuplicateOrUnscopedTokens(t *testing.T) {
	is := is.New(t)
	a := &config.Access{
		Tokens: []config.Token{
			{Name: "short", Token: "tiny", Scopes: []string{"read"}},
			{Name: "a", Token: "same-0123456789abcdef", Scopes: []string{"read"}},
			{Name: "a", Token: "same-0123456789abcdef", Scopes: []string{"write"}},
			{Name: "none", Token: "none-0123456789abcdef"},
		},
		AllowedOrigins: []string{"*"},
	}
	err := a.Validate()
	is.True(err != nil)
	for _, want := range []string{"at least 16 characters", `token name "a" is used twice`, "configured twice", `unknown scope "write"`, "needs at least one scope", `"*"`} {
		is.True(strings.Contains(err.Error(), want)) // each problem is named
	}
	is.True(!strings.Contains(err.Error(), "same-0123456789abcdef")) // never the token
}

func TestAMissingTokenFileIsAnError(t *testing.T) {
	is := is.New(t)
	_, err := (&config.Access{TokenFile: "nope.json"}).AllTokens(t.TempDir())
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "access.token_file"))
}
