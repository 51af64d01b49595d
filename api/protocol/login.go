package protocol

// The OAuth login of an upstream source (mcpflow extensions, run by
// `mcpflow sources login`): login_start returns the authorization URL
// for the user's browser, login_complete exchanges the code the loopback
// redirect brought, stores the tokens as the connection's auth record and
// connects its session. No token is ever in their params or results.
const (
	MethodConnectionsLoginStart    = "workflow.admin.connections.login_start"
	MethodConnectionsLoginComplete = "workflow.admin.connections.login_complete"
)

// LoginStartParams are the params of login_start: the loopback redirect
// the login listens on, and the PKCE S256 challenge and state it made.
type LoginStartParams struct {
	ConnectionID  string `json:"connection_id"`
	RedirectURI   string `json:"redirect_uri"`
	CodeChallenge string `json:"code_challenge"`
	State         string `json:"state"`
}

// LoginStartResult answers login_start.
type LoginStartResult struct {
	ConnectionID      string `json:"connection_id"`
	AuthorizationURL  string `json:"authorization_url"`
	AuthorizationHost string `json:"authorization_host"`
	// Issuer is the authorization server's; a redirect that names another
	// (RFC 9207 iss) is refused.
	Issuer string `json:"issuer"`
	// RedirectURI is the redirect the source registered (its port when it
	// fixes one).
	RedirectURI string `json:"redirect_uri"`
}

// LoginCompleteParams are the params of login_complete: the code the
// redirect brought, the PKCE verifier of login_start's challenge and the
// redirect the code was sent to.
type LoginCompleteParams struct {
	ConnectionID string `json:"connection_id"`
	Code         string `json:"code"`
	CodeVerifier string `json:"code_verifier"`
	RedirectURI  string `json:"redirect_uri"`
}

// LoginCompleteResult answers login_complete once the session connected
// and listed its catalog.
type LoginCompleteResult struct {
	ConnectionID      string `json:"connection_id"`
	AuthorizationHost string `json:"authorization_host"`
	State             string `json:"state"`
	NodeCount         int    `json:"node_count"`
}
