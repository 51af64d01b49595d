package sources

import (
	"cmp"
	"context"
	"fmt"

	"github.com/mcpflow/mcpflow/actors/config"
)

// Diagnosis is what a source's diagnosis finds of a connection, without
// reaching its server: whether a transport is configured, the auth record
// it uses, and the errors found in the two.
type Diagnosis struct {
	TransportConfigured bool
	Auth                AuthCheck
	Diagnostics         []Diagnostic
}

// Diagnostic is one error a diagnosis finds: Ref is what it is about (the
// source, or its auth record), Hint how to repair it.
type Diagnostic struct {
	Code    string
	Ref     string
	Message string
	Hint    string
}

// Diagnose checks c's transport and auth record (see CheckAuth).
func (s *Sources) Diagnose(ctx context.Context, c config.Connection) (Diagnosis, error) {
	id := c.ID
	d := Diagnosis{TransportConfigured: TransportConfigured(c.Transport), Diagnostics: []Diagnostic{}}
	if !d.TransportConfigured {
		d.Diagnostics = append(d.Diagnostics, Diagnostic{Code: "source_transport_missing", Ref: id,
			Message: fmt.Sprintf("source %q has no MCP transport configured", id), Hint: "configure a stdio or http transport for the source, then restart the server"})
	}
	auth, err := s.CheckAuth(ctx, c)
	if err != nil {
		return Diagnosis{}, err
	}
	d.Auth = auth
	if auth.Ref != "" && !auth.Present {
		d.Diagnostics = append(d.Diagnostics, Diagnostic{Code: "auth_not_found", Ref: auth.Ref,
			Message: fmt.Sprintf("source %q uses auth record %q, which does not exist", id, auth.Ref),
			Hint:    "save an auth record under that id (workflow.admin.auth.save), or change the source's auth_ref"})
	}
	if auth.Present && !auth.TransportSupported {
		d.Diagnostics = append(d.Diagnostics, Diagnostic{Code: "auth_scheme_not_supported", Ref: auth.Ref,
			Message: fmt.Sprintf("source %q uses the %s transport, which cannot use auth record %q of scheme %q", id, cmp.Or(c.Transport.Kind, "unknown"), auth.Ref, auth.Scheme),
			Hint:    "use env auth for a stdio source, or bearer, headers, oauth_refresh_token or oauth auth for an http source"})
	}
	if auth.NeedsLogin != "" {
		d.Diagnostics = append(d.Diagnostics, Diagnostic{Code: "needs_login", Ref: id, Message: auth.NeedsLogin,
			Hint: fmt.Sprintf("log in: mcpflow sources login %s (a login replaces the source's session)", id)})
	}
	return d, nil
}
