package config_test

import (
	"net/url"
	"testing"

	"github.com/matryer/is"

	"github.com/mcpflow/mcpflow/actors/config"
)

func TestShowURLHidesUserinfoAndQueryValues(t *testing.T) {
	is := is.New(t)
	for raw, want := range map[string]string{
		"":                                       "",
		"https://mcp.example/mcp":                "https://mcp.example/mcp",
		"https://mcp.example/mcp?api_key=s3cr3t": "https://mcp.example/mcp?api_key=[redacted]",
		"https://u:pw@mcp.example:8443/mcp?a=1&b=2": "https://[redacted]@mcp.example:8443/mcp?a=[redacted]&b=[redacted]",
		"http://mcp.example/mcp#token=s3cr3t":       "http://mcp.example/mcp",
		"http://[::1]:%zz/":                         "[redacted]",
	} {
		is.Equal(config.ShowURL(raw), want) // shown URL of raw
	}
}

func TestSameOriginFillsDefaultPorts(t *testing.T) {
	is := is.New(t)
	u := func(s string) *url.URL {
		v, err := url.Parse(s)
		is.NoErr(err)
		return v
	}
	is.True(config.SameOrigin(u("https://A.example/mcp"), u("https://a.example:443/other")))
	is.True(config.SameOrigin(u("http://a.example:80/"), u("http://a.example/x")))
	is.True(!config.SameOrigin(u("https://a.example/"), u("http://a.example/")))       // scheme
	is.True(!config.SameOrigin(u("https://a.example/"), u("https://b.example/")))      // host
	is.True(!config.SameOrigin(u("https://a.example/"), u("https://a.example:8443/"))) // port
	is.True(!config.SameOrigin(u("https://a.example/"), u("https://a.example.evil/"))) // suffix
}
