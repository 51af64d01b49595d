package sources

import (
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/workflow"
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
		t["command"], t["args"], t["env_keys"] = tr.Command, nonNil(tr.Args), workflow.SortedKeys(tr.Env)
	case config.TransportHTTP, config.TransportSSE:
		t["url"], t["header_keys"] = config.ShowURL(tr.URL), workflow.SortedKeys(tr.Headers)
	}
	m["transport"] = t
	if c.Auth != nil {
		m["auth"] = AuthObject(c.Auth) // kind, client id, scopes, redirect port: no secret
	}
	return m
}

// ShownTransport is a stored transport as it may be shown: env and
// headers become env_keys and header_keys, and the URL loses its userinfo
// and query values, as Metadata shows them; nil stays nil.
func ShownTransport(t map[string]any) map[string]any {
	if t == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range t {
		switch k {
		case "env":
			m, _ := v.(map[string]any)
			out["env_keys"] = workflow.SortedKeys(m)
		case "headers":
			m, _ := v.(map[string]any)
			out["header_keys"] = workflow.SortedKeys(m)
		case "url":
			raw, _ := v.(string)
			out[k] = config.ShowURL(raw)
		default:
			out[k] = v
		}
	}
	return out
}
