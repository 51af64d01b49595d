package config

import (
	"net/url"
	"strings"
)

// RedactedValue replaces a secret in a shown URL.
const RedactedValue = "[redacted]"

// ShowURL is raw as it may be shown in a response or a log line: the
// userinfo and every query value replaced by RedactedValue (the keys stay,
// so that a reader can still tell which parameters are set), and the
// fragment dropped. A URL that does not parse is shown as RedactedValue.
func ShowURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return RedactedValue
	}
	if u.User != nil {
		u.User = url.User(RedactedValue)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{RedactedValue}
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment, u.RawFragment = "", ""
	// url.URL escapes the brackets of the marker; show it as written.
	return strings.NewReplacer("%5B", "[", "%5D", "]").Replace(u.String())
}

// SameOrigin reports whether a and b have one origin: scheme, host and
// port, with the scheme's default port filled in. A configured header or
// credential is only ever sent to its URL's origin.
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// port is u's port, or its scheme's default.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https", "wss":
		return "443"
	case "http", "ws":
		return "80"
	}
	return ""
}
