package access_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/api/access"
)

func TestOriginsAreCheckedAgainstTheAllowListNeverTheHost(t *testing.T) {
	is := is.New(t)
	g := access.NewGate([]string{"https://console.example/"}, nil)
	for origin, want := range map[string]bool{
		"":                               true, // not a browser
		"http://localhost:3000":          true,
		"http://127.0.0.1:8765":          true,
		"http://[::1]:8765":              true,
		"http://app.localhost":           true,
		"https://console.example":        true,
		"https://CONSOLE.example":        true,
		"http://console.example":         false, // another scheme
		"https://console.example:8443":   false, // another port
		"http://evil.example":            false, // a rebinding page, whatever its Host
		"null":                           false,
		"file://":                        false,
		"https://console.example.evil.x": false,
	} {
		is.Equal(g.AllowOrigin(origin), want) // origin allowed
	}
}

func TestHostMustBeALoopbackOrAConfiguredName(t *testing.T) {
	is := is.New(t)
	g := access.NewGate(nil, []string{"mcpflow.internal"})
	for host, want := range map[string]bool{
		"127.0.0.1:8765":        true,
		"localhost:8765":        true,
		"localhost":             true,
		"[::1]:8765":            true,
		"mcpflow.internal:8765": true,
		"MCPFLOW.internal":      true,
		"evil.example:8765":     false, // DNS rebinding
		"10.0.0.5:8765":         false, // not configured
		"":                      false,
	} {
		is.Equal(g.AllowHost(host), want) // host allowed
	}
}

func TestListenAddressesOnLoopbackOnly(t *testing.T) {
	is := is.New(t)
	is.True(access.IsLoopbackListen("127.0.0.1:8765"))
	is.True(access.IsLoopbackListen("localhost:0"))
	is.True(access.IsLoopbackListen("[::1]:8765"))
	is.True(!access.IsLoopbackListen(":8765"))
	is.True(!access.IsLoopbackListen("0.0.0.0:8765"))
	is.True(!access.IsLoopbackListen("192.168.1.4:8765"))
}

func TestWithoutTokensOnlyLoopbackIsServedUnlessInsecure(t *testing.T) {
	is := is.New(t)
	none := access.NewGuard(nil)
	is.NoErr(access.CheckExposure("127.0.0.1:8765", none, false))
	err := access.CheckExposure("0.0.0.0:8765", none, false)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "--insecure-no-auth")) // says how to go on
	is.NoErr(access.CheckExposure("0.0.0.0:8765", none, true))
	is.NoErr(access.CheckExposure(":8765", access.NewGuard(tokens), false))
}
