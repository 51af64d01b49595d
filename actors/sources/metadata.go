package sources

import (
	"sort"

	"github.com/mcpflow/mcpflow/actors/config"
)

// Metadata shows how a connection is reached without revealing secrets:
// env values and header values are never listed, only their names;
// command, args and URL are shown as written in the config (a ${VAR}
// stays a reference), the URL without userinfo and query values.
func Metadata(c config.Connection) map[string]any {
	m := map[string]any{}
	for k, v := range c.Metadata {
		m[k] = v
	}
	tr := c.Transport.AsWritten()
	t := map[string]any{"kind": tr.Kind}
	switch tr.Kind {
	case config.TransportStdio:
		t["command"], t["args"], t["env_keys"] = tr.Command, nonNil(tr.Args), sortedKeys(tr.Env)
	case config.TransportHTTP, config.TransportSSE:
		t["url"], t["header_keys"] = config.ShowURL(tr.URL), sortedKeys(tr.Headers)
	}
	m["transport"] = t
	if c.Auth != nil {
		m["auth"] = AuthObject(c.Auth) // kind, client id, scopes, redirect port: no secret
	}
	return m
}

// sortedKeys lists a map's keys, sorted.
func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
