package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"time"
)

// Cluster makes the server one node of a cluster sharing its PostgreSQL
// store (docs/cluster.md): its id, where its actor remote listens and is
// reached, the members it knows of statically, and the ttl of its leases.
type Cluster struct {
	// NodeID names the node, unique in the cluster (ValidateNodeID).
	NodeID string `json:"node_id"`
	// Listen is the host:port the node's actor remote listens on.
	Listen string `json:"listen"`
	// Advertise is the host:port other nodes reach the remote at: Listen
	// when empty, which then needs a host other than 0.0.0.0 or ::.
	Advertise string `json:"advertise,omitempty"`
	// Members are nodes known in advance; without them the members are
	// those registered in the database. Either way only nodes whose node
	// lease is live are members.
	Members []ClusterMember `json:"members,omitempty"`
	// LeaseTTLMS is the ttl of the node's leases, in milliseconds:
	// DefaultLeaseTTL when 0, at least MinLeaseTTL.
	LeaseTTLMS int `json:"lease_ttl_ms,omitempty"`
}

// ClusterMember is a node of Cluster.Members.
type ClusterMember struct {
	NodeID string `json:"node_id"`
	// Address is the host:port of its actor remote (its advertise).
	Address string `json:"address"`
}

// Bounds of Cluster.LeaseTTLMS.
const (
	DefaultLeaseTTL = 10 * time.Second
	MinLeaseTTL     = time.Second
)

// nodeIDPattern is what a node id may be.
var nodeIDPattern = regexp.MustCompile(`^[a-z0-9_.-]{1,64}$`)

// ValidateNodeID checks a node id: 1 to 64 of a-z, 0-9, '-', '_' and '.'.
func ValidateNodeID(id string) error {
	if !nodeIDPattern.MatchString(id) {
		return fmt.Errorf("node id %q must be 1 to 64 of a-z, 0-9, '-', '_' and '.'", id)
	}
	return nil
}

// validateNodes checks a source's nodes: valid ids, each named once.
func validateNodes(nodes []string) error {
	seen := make(map[string]bool, len(nodes))
	for _, node := range nodes {
		if err := ValidateNodeID(node); err != nil {
			return err
		}
		if seen[node] {
			return fmt.Errorf("%q is listed twice", node)
		}
		seen[node] = true
	}
	return nil
}

// AdvertiseAddress is the host:port other nodes reach this one at.
func (c *Cluster) AdvertiseAddress() string {
	if c.Advertise != "" {
		return c.Advertise
	}
	return c.Listen
}

// LeaseTTL is the ttl of the node's leases.
func (c *Cluster) LeaseTTL() time.Duration {
	if c.LeaseTTLMS == 0 {
		return DefaultLeaseTTL
	}
	return time.Duration(c.LeaseTTLMS) * time.Millisecond
}

// Validate checks the cluster block on its own; File.Validate also
// requires a PostgreSQL store with it.
func (c *Cluster) Validate() error {
	if c == nil {
		return nil
	}
	var errs []error
	if err := ValidateNodeID(c.NodeID); err != nil {
		errs = append(errs, fmt.Errorf("cluster: node_id: %w", err))
	}
	if c.Listen == "" {
		errs = append(errs, errors.New("cluster: listen is required: the host:port of the node's actor remote"))
	} else if _, _, err := splitAddress(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("cluster: listen %w", err))
	} else if err := checkReachable(c.Listen); err != nil && c.Advertise == "" {
		errs = append(errs, fmt.Errorf("cluster: listen %w: set advertise, the host:port other nodes reach it at", err))
	}
	if c.Advertise != "" {
		if err := checkReachable(c.Advertise); err != nil {
			errs = append(errs, fmt.Errorf("cluster: advertise %w", err))
		}
	}
	switch ttl := c.LeaseTTL(); {
	case c.LeaseTTLMS < 0:
		errs = append(errs, errors.New("cluster: lease_ttl_ms must not be negative"))
	case ttl < MinLeaseTTL:
		errs = append(errs, fmt.Errorf("cluster: lease_ttl_ms must be at least %d", MinLeaseTTL.Milliseconds()))
	}
	return errors.Join(append(errs, c.validateMembers()...)...)
}

// validateMembers checks the static members: valid, each named once, and
// this node, when listed, at its advertise address.
func (c *Cluster) validateMembers() []error {
	var errs []error
	seen := make(map[string]bool, len(c.Members))
	for i, m := range c.Members {
		if err := ValidateNodeID(m.NodeID); err != nil {
			errs = append(errs, fmt.Errorf("cluster: members[%d]: %w", i, err))
			continue
		}
		if seen[m.NodeID] {
			errs = append(errs, fmt.Errorf("cluster: member %q is listed twice", m.NodeID))
		}
		seen[m.NodeID] = true
		if err := checkReachable(m.Address); err != nil {
			errs = append(errs, fmt.Errorf("cluster: member %q: address %w", m.NodeID, err))
		} else if m.NodeID == c.NodeID && m.Address != c.AdvertiseAddress() {
			errs = append(errs, fmt.Errorf("cluster: member %q is this node, listed at %s but advertised at %s", m.NodeID, m.Address, c.AdvertiseAddress()))
		}
	}
	return errs
}

// splitAddress splits a host:port whose port is 1 to 65535; the host may
// be empty (every interface).
func splitAddress(addr string) (string, uint16, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%q must be host:port", addr)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("%q must have a port from 1 to 65535", addr)
	}
	return host, uint16(n), nil
}

// checkReachable checks a host:port that other nodes dial: it names a
// host, not every interface (empty, 0.0.0.0 or ::).
func checkReachable(addr string) error {
	host, _, err := splitAddress(addr)
	if err != nil {
		return err
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		return fmt.Errorf("%q names every interface, not an address other nodes can reach", addr)
	}
	return nil
}
