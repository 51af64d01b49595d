package access

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// Gate checks where a request comes from: its Origin (browsers) against
// an allow-list, and its Host against loopback names and configured ones.
// Neither is ever compared with the other: a DNS-rebinding page sends a
// matching Host and Origin of its own.
type Gate struct {
	origins []string // lowercased scheme://host[:port], no trailing slash
	hosts   []string // lowercased names, no port
}

// NewGate accepts, besides loopback ones, the given origins and Host
// names.
func NewGate(origins, hosts []string) *Gate {
	g := &Gate{}
	for _, o := range origins {
		g.origins = append(g.origins, strings.ToLower(strings.TrimSuffix(o, "/")))
	}
	for _, h := range hosts {
		g.hosts = append(g.hosts, strings.ToLower(h))
	}
	return g
}

// AllowOrigin reports whether a request with this Origin header may be
// served. Requests without one (non-browser clients) may; so may loopback
// pages and the configured origins.
func (g *Gate) AllowOrigin(origin string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	if IsLoopbackName(u.Hostname()) {
		return true
	}
	return slices.Contains(g.origins, strings.ToLower(u.Scheme+"://"+u.Host))
}

// AllowHost reports whether the Host header names this server: a loopback
// name or address, or a configured name.
func (g *Gate) AllowHost(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.ToLower(strings.Trim(name, "[]"))
	return IsLoopbackName(name) || slices.Contains(g.hosts, name)
}

// IsLoopbackName reports whether name is localhost (or a name under
// .localhost) or a loopback IP address.
func IsLoopbackName(name string) bool {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(name, "[]"))
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackListen reports whether addr (host:port, as for net.Listen)
// listens on loopback only. An empty host ("":8765) listens everywhere.
func IsLoopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	return IsLoopbackName(host)
}

// CheckExposure decides whether mcpflow may listen on addr: without
// tokens only a loopback address is served, unless insecure (the
// --insecure-no-auth flag) says to serve anyone who can connect.
func CheckExposure(addr string, g *Guard, insecure bool) error {
	if g.Enabled() || insecure || IsLoopbackListen(addr) {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without access tokens: anyone who can reach it could deploy and run any tool; "+
		"configure server.access.tokens, listen on a loopback address, or pass --insecure-no-auth", addr)
}
