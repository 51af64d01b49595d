package sources

import (
	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
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
	if c.Client != nil {
		m["client"] = ClientObject(c.Client)
	}
	return m
}

// ShownTransport is a stored transport as it may be shown: the values of
// its secret keys (store.SecretTransportKey, the one rule of what is
// secret in a transport) are shown without their secrets, env and headers
// as env_keys and header_keys, and the URL without its userinfo and query
// values, as Metadata shows them; nil stays nil.
func ShownTransport(t map[string]any) map[string]any {
	if t == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range t {
		shownAs, secret := store.SecretTransportKey(k)
		if !secret {
			out[k] = v
			continue
		}
		switch v := v.(type) {
		case map[string]any: // env, headers: their names only
			out[shownAs] = workflow.SortedKeys(v)
		case string: // the url
			out[shownAs] = config.ShowURL(v)
		} // a secret of any other shape is not shown at all
	}
	return out
}
