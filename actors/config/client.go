package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
)

// Client is what mcpflow answers, as an MCP client, to the server of one
// source: whether a server's elicitation/create and sampling/createMessage
// become run interrupts or are refused, the roots roots/list answers, and
// the level of the logs it asks for with logging/setLevel. A nil Client
// is the defaults (elicitation interrupt, sampling refuse, no roots,
// info).
type Client struct {
	// Elicitation is "interrupt" (the default: the run that made the call
	// is interrupted with the request and its resume answers it) or
	// "refuse".
	Elicitation string `json:"elicitation,omitempty"`
	// Sampling is "refuse" (the default), "interrupt" (as elicitation), or
	// "client" (forwarded to the MCP client that started the run, when it
	// declared sampling).
	Sampling string `json:"sampling,omitempty"`
	// Roots are what roots/list answers; a change is told to the open
	// session with notifications/roots/list_changed.
	Roots []Root `json:"roots,omitempty"`
	// LogLevel is the level sent with logging/setLevel once a session
	// opens, when the server declares logging: one of LogLevels.
	LogLevel string `json:"log_level,omitempty"`
}

// Root is one root of a source's client block: a file:// URI and an
// optional name.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// The policies of a client block.
const (
	PolicyInterrupt = "interrupt"
	PolicyRefuse    = "refuse"
	PolicyClient    = "client"
)

// DefaultLogLevel is the level a client block asks for when it names none.
const DefaultLogLevel = "info"

// LogLevels are MCP's logging levels (RFC 5424's severities), least
// severe first.
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// ElicitationPolicy is the elicitation policy, "interrupt" unless set.
func (c *Client) ElicitationPolicy() string {
	if c == nil || c.Elicitation == "" {
		return PolicyInterrupt
	}
	return c.Elicitation
}

// SamplingPolicy is the sampling policy, "refuse" unless set.
func (c *Client) SamplingPolicy() string {
	if c == nil || c.Sampling == "" {
		return PolicyRefuse
	}
	return c.Sampling
}

// Level is the log level, "info" unless set.
func (c *Client) Level() string {
	if c == nil || c.LogLevel == "" {
		return DefaultLogLevel
	}
	return c.LogLevel
}

// RootList is the roots, nil for none.
func (c *Client) RootList() []Root {
	if c == nil {
		return nil
	}
	return c.Roots
}

// Validate checks a client block: its policies, roots (absolute file://
// URIs, each once) and log level. A nil block is valid.
func (c *Client) Validate() error {
	if c == nil {
		return nil
	}
	var errs []error
	if p := c.Elicitation; p != "" && p != PolicyInterrupt && p != PolicyRefuse {
		errs = append(errs, fmt.Errorf("client.elicitation must be %q or %q, got %q", PolicyInterrupt, PolicyRefuse, p))
	}
	if p := c.Sampling; p != "" && p != PolicyRefuse && p != PolicyInterrupt && p != PolicyClient {
		errs = append(errs, fmt.Errorf("client.sampling must be %q, %q or %q, got %q", PolicyRefuse, PolicyInterrupt, PolicyClient, p))
	}
	if l := c.LogLevel; l != "" && !slices.Contains(LogLevels, l) {
		errs = append(errs, fmt.Errorf("client.log_level must be one of %v (MCP's logging levels), got %q", LogLevels, l))
	}
	seen := make(map[string]bool, len(c.Roots))
	for i, r := range c.Roots {
		u, err := url.Parse(r.URI)
		switch {
		case r.URI == "":
			errs = append(errs, fmt.Errorf("client.roots[%d]: uri is required", i))
		case err != nil || u.Scheme != "file" || u.Path == "":
			errs = append(errs, fmt.Errorf("client.roots[%d]: uri %q must be an absolute file:// URI, such as file:///home/me/project", i, r.URI))
		case seen[r.URI]:
			errs = append(errs, fmt.Errorf("client.roots[%d]: uri %q is listed twice", i, r.URI))
		}
		seen[r.URI] = true
	}
	return errors.Join(errs...)
}
