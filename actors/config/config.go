// Package config owns the neutral configuration file of mcpflow: the store
// root and the MCP source connections it supervises. It parses (converting
// Claude Desktop, Cursor and VS Code MCP files, expanding ${VAR} references)
// and validates; it never opens a connection.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// File is the neutral config document:
//
//	{"version":1,"server":{"store":{"root":".mcpflow"},"sources":[...]}}
type File struct {
	Version int    `json:"version"`
	Server  Server `json:"server"`
	// dir is the directory of the file Load read, which relative paths
	// in it (access.token_file, store.root) start from; "" for a parsed
	// document.
	dir string
	// imported says how a Claude Desktop, Cursor or VS Code file was
	// converted; nil for an mcpflow config.
	imported *ImportReport
}

// Server holds what the service needs to start.
type Server struct {
	Store   Store        `json:"store"`
	Sources []Connection `json:"sources"`
	// Supervision is every source's default supervision policy.
	Supervision *Supervision `json:"supervision,omitempty"`
	// Edge bounds the network edge; absent fields keep the defaults.
	Edge *Edge `json:"edge,omitempty"`
	// Access says who may call the API; absent, loopback clients only.
	Access *Access `json:"access,omitempty"`
	// Cluster makes the server a node of a cluster; absent, it runs
	// alone.
	Cluster *Cluster `json:"cluster,omitempty"`
	// Retention says how long finished runs are kept; absent, 30 days.
	Retention *Retention `json:"retention,omitempty"`
	// MCP says how MCP clients see the deployments; absent, /mcp offers
	// one tool per deployment.
	MCP *MCP `json:"mcp,omitempty"`
	// Secrets says where the key that seals auth records is; absent, see
	// Secrets.KeyFile.
	Secrets *Secrets `json:"secrets,omitempty"`
	// Limits bounds what one run or one upstream answer may cost; absent
	// fields keep the defaults.
	Limits *Limits `json:"limits,omitempty"`
}

// Store says where records are kept.
type Store struct {
	Kind string `json:"kind,omitempty"` // StoreSQLite (default) | StorePostgres
	Root string `json:"root,omitempty"`
	// Sync is how far a commit must reach before it is acknowledged:
	// StoreSyncFull (the default) or StoreSyncNormal.
	Sync string `json:"sync,omitempty"`
	// DSN is the PostgreSQL connection string of kind postgres, usually
	// "${MCPFLOW_PG_DSN}". It holds a password: nothing shows it.
	DSN string `json:"dsn,omitempty"`
}

// Store kinds.
const (
	// StoreSQLite keeps records in one SQLite file under the store root.
	StoreSQLite = "sqlite"
	// StorePostgres keeps records in the PostgreSQL database DSN names.
	StorePostgres = "postgres"
)

// The store's sync levels (docs/operations.md says what each keeps).
const (
	// StoreSyncFull syncs every commit to disk: it survives a power loss.
	StoreSyncFull = "full"
	// StoreSyncNormal syncs at checkpoints only: a commit survives a crash
	// of the process, but the last ones may be lost to a crash of the
	// operating system or a power loss.
	StoreSyncNormal = "normal"
)

// Validate checks the store settings.
func (s Store) Validate() error {
	if err := s.validateKind(); err != nil {
		return err
	}
	switch s.Sync {
	case "", StoreSyncFull, StoreSyncNormal:
		return nil
	}
	return fmt.Errorf("store: sync must be %q or %q, got %q", StoreSyncFull, StoreSyncNormal, s.Sync)
}

// validateKind checks the kind and what it takes: a dsn for postgres, and
// for sqlite none. The errors never quote the dsn.
func (s Store) validateKind() error {
	switch s.Kind {
	case "", StoreSQLite:
		if s.DSN != "" {
			return fmt.Errorf("store: dsn is for kind %q, not %q", StorePostgres, StoreSQLite)
		}
	case StorePostgres:
		if s.DSN == "" {
			return fmt.Errorf("store: kind %q needs a dsn, such as \"${MCPFLOW_PG_DSN}\"", StorePostgres)
		}
		if s.Sync != "" {
			return errors.New("store: sync is SQLite's; PostgreSQL's durability is its own synchronous_commit setting")
		}
	default:
		return fmt.Errorf("store: kind must be %q or %q, got %q", StoreSQLite, StorePostgres, s.Kind)
	}
	return nil
}

// Connection is one MCP source connection. Its id is "<provider>.<account>".
type Connection struct {
	Kind      string    `json:"kind"` // always "mcp"
	ID        string    `json:"id"`
	Enabled   *bool     `json:"enabled,omitempty"`
	Provider  string    `json:"provider,omitempty"`
	Account   string    `json:"account,omitempty"`
	Profile   *string   `json:"profile,omitempty"`
	Ownership string    `json:"ownership,omitempty"` // "locked" (default) | "seed"
	Transport Transport `json:"transport"`
	AuthRef   *string   `json:"auth_ref,omitempty"`
	// Auth, when set, is how the source logs in (kind "oauth").
	Auth     *SourceAuth    `json:"auth,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// Supervision overrides the server's supervision policy for this
	// source.
	Supervision *Supervision `json:"supervision,omitempty"`
	// Nodes are the cluster nodes the source may run on, such as those
	// where its command exists; empty, any node.
	Nodes []string `json:"nodes,omitempty"`
	// MaxResultBytes bounds one answer of the source (a tool's result,
	// a resource's contents), in bytes of the JSON-RPC message as it
	// comes; absent or 0, server.limits.max_result_bytes holds.
	MaxResultBytes int64 `json:"max_result_bytes,omitempty"`
	// Client is what mcpflow answers the source's server as an MCP
	// client (elicitation, sampling, roots, log level); nil keeps the
	// defaults. A change applies at the source's next session, but for
	// its roots, which the open session is told of.
	Client *Client `json:"client,omitempty"`
	// Expose offers the source through the MCP face (gateway mode) as a
	// server.mcp.expose entry would, from the config file's sources or
	// the source registry: its connection is the source's id (given or
	// not). nil exposes nothing; a source may not also have a
	// server.mcp.expose entry.
	Expose *MCPExpose `json:"expose,omitempty"`
}

// Transport says how to reach an MCP server: a stdio subprocess or a
// streamable HTTP endpoint.
type Transport struct {
	Kind    string            `json:"kind"` // "stdio" | "http" | "sse"
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// ProtocolVersion is the MCP version the session asks for; empty keeps
	// the server-wide default (session.Options.ProtocolVersion).
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// written is the transport as the config file has it, before its
	// ${VAR} references were expanded; nil when it has none (AsWritten).
	written *Transport
}

// ProtocolVersions are the MCP versions a source may ask for.
var ProtocolVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// Transport kinds.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	// TransportSSE is the legacy HTTP+SSE transport (MCP 2024-11-05) of
	// older servers.
	TransportSSE = "sse"
)

// DefaultStoreRoot is where records live when the config names no root.
const DefaultStoreRoot = ".mcpflow"

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// reservedIDs cannot name a connection: they belong to built-in sources.
var reservedIDs = map[string]bool{"wf.admin": true, "wf.mcp": true, "wf.std": true, "wf.recipes": true, "wf.source": true}

// IsEnabled reports whether the connection is enabled (the default).
func (c Connection) IsEnabled() bool { return c.Enabled == nil || *c.Enabled }

// Server is the provider part of the id ("fixture" in "fixture.default").
func (c Connection) Server() string {
	if c.Provider != "" {
		return c.Provider
	}
	provider, _, _ := strings.Cut(c.ID, ".")
	return provider
}

// AccountName is the account part of the id ("default" in "fixture.default").
func (c Connection) AccountName() string {
	if c.Account != "" {
		return c.Account
	}
	_, account, _ := strings.Cut(c.ID, ".")
	return account
}

// ValidateID checks the reference rule for connection ids.
func ValidateID(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("connection id %q must match %s", id, idPattern)
	}
	provider, account, ok := strings.Cut(id, ".")
	if !ok || provider == "" || account == "" || strings.Contains(id, "..") || strings.HasSuffix(id, ".") {
		return fmt.Errorf("connection id %q must be <provider>.<account>, with no empty part", id)
	}
	if IsReserved(id) {
		return fmt.Errorf("connection id %q is reserved", id)
	}
	return nil
}

// IsReserved reports whether id belongs to a built-in source and so can
// name no connection.
func IsReserved(id string) bool { return reservedIDs[id] }

// Validate checks one connection.
func (c Connection) Validate() error {
	if c.Kind != "mcp" {
		return fmt.Errorf("source %q: kind must be \"mcp\", got %q", c.ID, c.Kind)
	}
	if err := ValidateID(c.ID); err != nil {
		return err
	}
	switch c.Ownership {
	case "", OwnershipLocked, OwnershipSeed:
	default:
		return fmt.Errorf("source %q: ownership must be %q or %q, got %q", c.ID, OwnershipLocked, OwnershipSeed, c.Ownership)
	}
	if err := c.Transport.Validate(); err != nil {
		return fmt.Errorf("source %q: %w", c.ID, err)
	}
	if err := c.Supervision.Validate(); err != nil {
		return fmt.Errorf("source %q: %w", c.ID, err)
	}
	if err := c.Auth.Validate(c.Transport.Kind); err != nil {
		return fmt.Errorf("source %q: %w", c.ID, err)
	}
	if err := validateNodes(c.Nodes); err != nil {
		return fmt.Errorf("source %q: nodes: %w", c.ID, err)
	}
	if c.MaxResultBytes < 0 {
		return fmt.Errorf("source %q: max_result_bytes must not be negative (0 or absent keeps server.limits.max_result_bytes)", c.ID)
	}
	if err := c.Client.Validate(); err != nil {
		return fmt.Errorf("source %q: %w", c.ID, err)
	}
	if e := c.Expose; e != nil {
		var errs []error
		if e.Connection != "" && e.Connection != c.ID {
			errs = append(errs, fmt.Errorf("source %q: expose.connection: %q is another source; leave it out (it is the source's own id)", c.ID, e.Connection))
		}
		e.check(func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("source %q: expose"+format, append([]any{c.ID}, args...)...))
		})
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks a transport: its kind, what that kind needs, and no
// field of the other kind.
func (t Transport) Validate() error {
	if t.ProtocolVersion != "" && !slices.Contains(ProtocolVersions, t.ProtocolVersion) {
		return fmt.Errorf("protocol_version %q is not one of %v", t.ProtocolVersion, ProtocolVersions)
	}
	switch t.Kind {
	case TransportStdio:
		if t.Command == "" {
			return errors.New("stdio transport needs a command")
		}
		if t.URL != "" || len(t.Headers) > 0 {
			return errors.New("stdio transport takes no url or headers")
		}
	case TransportHTTP, TransportSSE:
		u, err := url.Parse(t.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s transport needs an http(s) url", t.Kind)
		}
		if t.Command != "" || len(t.Args) > 0 || len(t.Env) > 0 || t.Cwd != "" {
			return fmt.Errorf("%s transport takes no command, args, env or cwd", t.Kind)
		}
	default:
		return fmt.Errorf("transport kind must be stdio, http or sse, got %q", t.Kind)
	}
	return nil
}

// Validate checks the whole file: version, unique and valid source ids.
func (f *File) Validate() error {
	if f.Version != 1 {
		return fmt.Errorf("config version must be 1, got %d", f.Version)
	}
	seen := make(map[string]bool, len(f.Server.Sources))
	var errs []error
	if err := f.Server.Store.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := f.Server.Supervision.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := f.Server.Edge.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := f.Server.Access.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := f.Server.Cluster.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := f.Server.Retention.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := f.Server.MCP.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := f.Server.Secrets.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := f.Server.Limits.Validate(); err != nil {
		errs = append(errs, err)
	}
	if f.Server.Cluster != nil && f.Server.Store.Kind != StorePostgres {
		errs = append(errs, fmt.Errorf("cluster: the nodes of a cluster share a PostgreSQL store: set server.store.kind to %q", StorePostgres))
	}
	if err := ValidateExposures(f.Server.MCP, f.Server.Sources); err != nil {
		errs = append(errs, err)
	}
	for _, c := range f.Server.Sources {
		if err := c.Validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[c.ID] {
			errs = append(errs, fmt.Errorf("source %q is configured twice", c.ID))
		}
		seen[c.ID] = true
	}
	return errors.Join(errs...)
}

// Dir is the directory of the file the config was loaded from, "." for
// one parsed from memory: relative paths in the config start there.
func (f *File) Dir() string {
	if f.dir == "" {
		return "."
	}
	return f.dir
}

// StoreRoot is the configured store root, a relative one resolved against
// the config file's folder (Dir), or else DefaultStoreRoot, which is
// relative to the working directory.
func (f *File) StoreRoot() string {
	root := f.Server.Store.Root
	switch {
	case root == "":
		return DefaultStoreRoot
	case filepath.IsAbs(root) || f.dir == "":
		return root
	}
	return filepath.Join(f.dir, root)
}

// Connections returns the sources sorted by id.
func (f *File) Connections() []Connection {
	out := append([]Connection(nil), f.Server.Sources...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Parse decodes and validates a config document; unknown keys are errors.
// A Claude Desktop, Cursor or VS Code MCP file (top-level mcpServers or
// servers) is converted by Import first. ${VAR} references in string
// values expand from the environment (see expand.go); errors name
// variables, never their values.
func Parse(data []byte) (*File, error) {
	var imported *ImportReport
	if problems := findProblems(data); len(problems) > 0 && !IsForeign(data) {
		return nil, &ParseError{Problems: problems}
	}
	if IsForeign(data) {
		f, err := Import(data)
		if err != nil {
			return nil, err
		}
		imported = f.imported
		if data, err = json.Marshal(f); err != nil {
			return nil, fmt.Errorf("encode imported config: %w", err)
		}
	}
	written, err := decodeStrict(data)
	if problem, ok := typeProblem(data, err); ok && imported == nil {
		return nil, &ParseError{Problems: []Problem{problem}}
	}
	if err != nil {
		return nil, fmt.Errorf("parse config: %w", err)
	}
	f, secrets, err := expandFile(data, written, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("invalid config: %w", redact(err, secrets))
	}
	f.imported = imported
	return f, nil
}

// decodeStrict decodes a config document; unknown keys are errors.
func decodeStrict(data []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	return &f, nil
}

// Load reads and parses a config file.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	f, err := Parse(data)
	if perr, ok := errors.AsType[*ParseError](err); ok {
		perr.File = path
		return nil, perr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.dir = filepath.Dir(path)
	if abs, err := filepath.Abs(f.dir); err == nil {
		f.dir = abs
	}
	return f, nil
}
