package session

import (
	"regexp"
	"sort"
	"strings"

	"github.com/mcpflow/mcpflow/actors/config"
)

// Redacted replaces what is removed from a message.
const Redacted = "[redacted]"

var (
	// urlQuery matches the query (and fragment) of a URL in free text.
	urlQuery = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'?#]*)[?#][^\s"']*`)
	// urlUserinfo matches credentials in a URL: scheme://user:pass@host.
	urlUserinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^\s"'/@]*@`)
)

// Redact removes from msg what could be a secret of conn: the values of
// its headers and environment variables, the query and credentials of any
// URL. Errors shown in a connection's status go through it.
func Redact(conn config.Connection, msg string) string {
	if msg == "" {
		return msg
	}
	var secrets []string
	for _, m := range []map[string]string{conn.Transport.Headers, conn.Transport.Env} {
		for _, v := range m {
			if len(v) >= 4 { // shorter values would mangle ordinary words
				secrets = append(secrets, v)
				// A bearer header's token also appears on its own.
				if _, token, ok := strings.Cut(v, " "); ok && len(token) >= 4 {
					secrets = append(secrets, token)
				}
			}
		}
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, Redacted)
	}
	msg = urlQuery.ReplaceAllString(msg, "${1}?"+Redacted)
	return urlUserinfo.ReplaceAllString(msg, "${1}"+Redacted+"@")
}
