// Package credentials binds a source's auth record to the transport that
// reaches it (reference §3.3). An HTTP source gets a round tripper that
// authorizes each of its requests (schemes bearer, headers and
// oauth_refresh_token); a stdio source gets environment variables (scheme
// env) that win over its transport's own.
//
// Secret values never reach an error, a log line or an answer: errors and
// logs name the auth id, the scheme and payload key names only, a
// Credential formats itself without its values, and the bodies of upstream
// error responses are scrubbed of every secret before the MCP client reads
// them (a server that echoes a rejected token cannot put it in an error).
//
// An oauth_refresh_token access token is kept in memory per auth record
// and outlives sessions: it is refreshed before it expires and at most once
// after a 401, never at every session open or call (fixing the reference's
// quirk C.12); a rotated refresh token is saved to the record.
//
// A source with auth kind "oauth" follows the MCP authorization spec: a
// 401 makes its round tripper discover the authorization server and
// register a client (an auth record of scheme oauth); BeginLogin and
// CompleteLogin run the server's half of the authorization-code + PKCE
// login; a refresh refused for good ends the login. Until a login, its
// requests fail with a *LoginError (ErrNeedsLogin).
package credentials

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/actors/store"
)

// Schemes bound to transports. Records of any other scheme may be saved
// (the reference keeps them as opaque) but bind to no transport.
const (
	SchemeBearer            = "bearer"
	SchemeHeaders           = "headers"
	SchemeEnv               = "env"
	SchemeOAuthRefreshToken = "oauth_refresh_token"
)

// Diagnostic codes of the reference (§3.3).
const (
	CodeNotFound     = "auth_not_found"
	CodeNotSupported = "auth_scheme_not_supported"
)

var (
	// ErrNotFound: a connection names an auth record (auth_ref) that does
	// not exist.
	ErrNotFound = errors.New(CodeNotFound)
	// ErrNotSupported: the record's scheme is not one the connection's
	// transport takes.
	ErrNotSupported = errors.New(CodeNotSupported)
	// ErrInvalid: the record's payload lacks what its scheme needs.
	ErrInvalid = errors.New("invalid auth payload")
)

// Lookup finds the auth record a connection uses; false when it uses none.
// Errors never hold payload values.
type Lookup func(ctx context.Context, conn config.Connection) (store.AuthRecord, bool, error)

// Ref names the auth record conn uses: its auth_ref (or, from legacy
// configs, metadata.auth_ref) when set, explicit, else its own id.
func Ref(conn config.Connection) (id string, explicit bool) {
	if conn.AuthRef != nil && *conn.AuthRef != "" {
		return *conn.AuthRef, true
	}
	if ref, ok := conn.Metadata["auth_ref"].(string); ok && ref != "" {
		return ref, true
	}
	return conn.ID, false
}

// FromStore looks records up in records by Ref. A connection whose
// auth_ref names no record fails with ErrNotFound; one without auth_ref
// and without a record of its own id uses none.
func FromStore(records store.AuthRecords) Lookup {
	return func(ctx context.Context, conn config.Connection) (store.AuthRecord, bool, error) {
		id, explicit := Ref(conn)
		rec, err := records.GetAuth(ctx, id)
		switch {
		case err == nil:
			return rec, true, nil
		case errors.Is(err, store.ErrNotFound) && !explicit:
			return store.AuthRecord{}, false, nil
		case errors.Is(err, store.ErrNotFound):
			return store.AuthRecord{}, false, fmt.Errorf("connection %q: auth record %q does not exist: %w", conn.ID, id, ErrNotFound)
		default:
			return store.AuthRecord{}, false, fmt.Errorf("connection %q: read auth record %q: %w", conn.ID, id, err)
		}
	}
}

// Credential is an auth record's payload read for its scheme. It formats
// itself with its id and scheme only.
type Credential struct {
	ID, Scheme string
	bearer     string
	headers    map[string]string
	env        map[string]string
	oauth      *oauthConfig
	login      *loginConfig // scheme oauth
}

type oauthConfig struct {
	clientID, clientSecret, refreshToken, tokenURL string
	scopes                                         []string
}

// String describes c without any secret.
func (c Credential) String() string {
	return fmt.Sprintf("credentials.Credential{ID:%q Scheme:%q}", c.ID, c.Scheme)
}

// GoString is String, for %#v.
func (c Credential) GoString() string { return c.String() }

// Format makes every verb print c as String does.
func (c Credential) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// secrets are the values that must never be shown.
func (c Credential) secrets() []string {
	var out []string
	out = append(out, c.bearer)
	for _, v := range c.headers {
		out = append(out, v)
	}
	for _, v := range c.env {
		out = append(out, v)
	}
	if c.oauth != nil {
		out = append(out, c.oauth.clientSecret, c.oauth.refreshToken)
	}
	if c.login != nil {
		out = append(out, c.login.access)
	}
	return out
}

// Parse reads rec's payload for its scheme: bearer {token or access_token},
// headers {headers: {name: value}}, env {env: {NAME: value}},
// oauth_refresh_token {client_id, client_secret?, refresh_token,
// token_url, scopes?}, oauth (see SchemeOAuth). Any other scheme parses as opaque (it binds to no
// transport). Errors (ErrInvalid) name the id, scheme and key, never a
// value.
func Parse(rec store.AuthRecord) (Credential, error) {
	c := Credential{ID: rec.ID, Scheme: rec.Scheme}
	p := payload{rec: rec}
	switch rec.Scheme {
	case SchemeBearer:
		tok, _ := rec.Payload["token"].(string)
		if tok == "" {
			tok, _ = rec.Payload["access_token"].(string)
		}
		if tok == "" {
			return c, p.invalid("needs a non-empty string token (or access_token)")
		}
		if !validHeaderValue(tok) {
			return c, p.invalid("token holds a control character")
		}
		c.bearer = tok
	case SchemeHeaders:
		h, err := p.stringMap("headers")
		if err != nil {
			return c, err
		}
		for _, name := range slices.Sorted(maps.Keys(h)) {
			if !validHeaderName(name) {
				return c, p.invalid(fmt.Sprintf("headers has an invalid header name %q", name))
			}
			if !validHeaderValue(h[name]) {
				return c, p.invalid(fmt.Sprintf("headers.%s holds a control character", name))
			}
		}
		c.headers = h
	case SchemeEnv:
		env, err := p.stringMap("env")
		if err != nil {
			return c, err
		}
		for _, name := range slices.Sorted(maps.Keys(env)) {
			if name == "" || strings.ContainsAny(name, "=\x00") {
				return c, p.invalid(fmt.Sprintf("env has an invalid variable name %q", name))
			}
			if strings.ContainsRune(env[name], 0) {
				return c, p.invalid(fmt.Sprintf("env.%s holds a NUL character", name))
			}
		}
		c.env = env
	case SchemeOAuthRefreshToken:
		o, err := parseOAuth(p)
		if err != nil {
			return c, err
		}
		c.oauth = o
	case SchemeOAuth:
		o, l, err := parseLogin(p)
		if err != nil {
			return c, err
		}
		c.oauth, c.login = o, l
	}
	return c, nil
}

func parseOAuth(p payload) (*oauthConfig, error) {
	o := &oauthConfig{}
	for _, f := range []struct {
		key      string
		to       *string
		required bool
	}{
		{"client_id", &o.clientID, true},
		{"client_secret", &o.clientSecret, false},
		{"refresh_token", &o.refreshToken, true},
		{"token_url", &o.tokenURL, true},
	} {
		v, present := p.rec.Payload[f.key]
		s, isString := v.(string)
		switch {
		case present && v != nil && !isString:
			return nil, p.invalid(f.key + " is not a string")
		case f.required && s == "":
			return nil, p.invalid("needs a non-empty string " + f.key)
		}
		*f.to = s
	}
	u, err := url.Parse(o.tokenURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, p.invalid("token_url is not an http(s) URL")
	}
	scopes, err := parseScopes(p)
	if err != nil {
		return nil, err
	}
	o.scopes = scopes
	return o, nil
}

// parseScopes reads the payload's scopes, a list of strings (or none).
func parseScopes(p payload) ([]string, error) {
	var out []string
	switch scopes := p.rec.Payload["scopes"].(type) {
	case nil:
	case []any:
		for _, s := range scopes {
			str, ok := s.(string)
			if !ok {
				return nil, p.invalid("scopes holds a value that is not a string")
			}
			out = append(out, str)
		}
	case []string:
		out = slices.Clone(scopes)
	default:
		return nil, p.invalid("scopes is not a list of strings")
	}
	return out, nil
}

// Validate checks that rec's payload has what its scheme needs (see
// Parse); records of other schemes are valid.
func Validate(rec store.AuthRecord) error {
	_, err := Parse(rec)
	return err
}

// payload reads one record's payload for error messages that name it.
type payload struct{ rec store.AuthRecord }

func (p payload) invalid(what string) error {
	return fmt.Errorf("auth record %q (%s): payload %s: %w", p.rec.ID, p.rec.Scheme, what, ErrInvalid)
}

// stringMap reads payload[key] as an object of strings.
func (p payload) stringMap(key string) (map[string]string, error) {
	raw, ok := p.rec.Payload[key]
	if !ok || raw == nil {
		return nil, p.invalid("needs an object " + key)
	}
	out := map[string]string{}
	switch m := raw.(type) {
	case map[string]any:
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return nil, p.invalid(fmt.Sprintf("%s.%s is not a string", key, k))
			}
			out[k] = s
		}
	case map[string]string:
		for k, v := range m {
			out[k] = v
		}
	default:
		return nil, p.invalid(key + " is not an object")
	}
	return out, nil
}

// validHeaderName reports whether name is an HTTP token (RFC 9110).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether v can be sent as a header value.
func validHeaderValue(v string) bool {
	return !strings.ContainsAny(v, "\r\n\x00")
}
