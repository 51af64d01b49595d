package protocol

// Method names: the source registry (desired sources) and its apply.
const (
	MethodRegistryList    = "workflow.admin.source_registry.list"
	MethodRegistryInspect = "workflow.admin.source_registry.inspect"
	MethodRegistryAdd     = "workflow.admin.source_registry.add"
	MethodRegistryUpdate  = "workflow.admin.source_registry.update"
	MethodRegistryEnable  = "workflow.admin.source_registry.enable"
	MethodRegistryDisable = "workflow.admin.source_registry.disable"
	MethodRegistryRemove  = "workflow.admin.source_registry.remove"
	MethodRegistryApply   = "workflow.admin.source_registry.apply"
)

// ListRegistryParams are the params of workflow.admin.source_registry.list.
type ListRegistryParams struct {
	Cursor *string `json:"cursor,omitempty"`
	Limit  *int    `json:"limit,omitempty"`
}

// RegistrySourceParams name one registry entry: the params of inspect,
// enable, disable and remove.
type RegistrySourceParams struct {
	SourceID string `json:"source_id"`
}

// AddRegistryEntryParams are the params of
// workflow.admin.source_registry.add: the entry
// {id, kind?: "mcp", enabled?: true, provider?, account?, profile?,
// transport, auth_ref?, metadata?}.
type AddRegistryEntryParams struct {
	Entry Object `json:"entry"`
}

// UpdateRegistryEntryParams are the params of
// workflow.admin.source_registry.update: each top-level key of Patch
// replaces that field of the entry.
type UpdateRegistryEntryParams struct {
	SourceID string `json:"source_id"`
	Patch    Object `json:"patch"`
}

// RegistryEntry is the manifest's RegistryEntryPayload. Transport shows
// how the source is reached but, as connections.list does, only the names
// of env variables (env_keys) and headers (header_keys), never their
// values.
type RegistryEntry struct {
	ID        string  `json:"id"`
	Kind      string  `json:"kind"`
	Enabled   bool    `json:"enabled"`
	Provider  *string `json:"provider"`
	Account   *string `json:"account"`
	Profile   *string `json:"profile"`
	Transport Object  `json:"transport"`
	AuthRef   *string `json:"auth_ref"`
	// Auth is how the source logs in ({"kind": "oauth", ...}), when set
	// (it holds no secret).
	Auth Object `json:"auth,omitempty"`
	// Client is the source's client block (elicitation, sampling, roots,
	// log_level), when set: an mcpflow extension.
	Client Object `json:"client,omitempty"`
	// Expose is the source's expose block (gateway mode), when set: an
	// mcpflow extension.
	Expose   Object `json:"expose,omitempty"`
	Metadata Object `json:"metadata"`
}

// RegistryEntrySummary is the manifest's RegistryEntrySummaryPayload: one
// row of workflow.admin.source_registry.list.
type RegistryEntrySummary struct {
	ID               string  `json:"id"`
	Kind             string  `json:"kind"`
	Enabled          bool    `json:"enabled"`
	Provider         *string `json:"provider"`
	Account          *string `json:"account"`
	Profile          *string `json:"profile"`
	TransportKind    *string `json:"transport_kind"`
	AuthRef          *string `json:"auth_ref"`
	ShadowedByConfig bool    `json:"shadowed_by_config"`
	ConfigOwnership  *string `json:"config_ownership"`
	Mutable          bool    `json:"mutable"`
}

// ListRegistryEntriesResult answers workflow.admin.source_registry.list.
type ListRegistryEntriesResult struct {
	Entries    []RegistryEntrySummary `json:"entries"`
	NextCursor *string                `json:"next_cursor"`
	Total      int                    `json:"total"`
}

// InspectRegistryEntryResult answers workflow.admin.source_registry.inspect.
type InspectRegistryEntryResult struct {
	Entry            RegistryEntry `json:"entry"`
	ShadowedByConfig bool          `json:"shadowed_by_config"`
	ConfigOwnership  *string       `json:"config_ownership"`
	Mutable          bool          `json:"mutable"`
}

// RegistryEntryMutationResult answers add, update, enable and disable.
type RegistryEntryMutationResult struct {
	Entry            RegistryEntry `json:"entry"`
	ShadowedByConfig bool          `json:"shadowed_by_config"`
}

// RemoveRegistryEntryResult answers workflow.admin.source_registry.remove.
type RemoveRegistryEntryResult struct {
	Removed  bool   `json:"removed"`
	SourceID string `json:"source_id"`
}

// ApplyRegistryChangesResult answers workflow.admin.source_registry.apply:
// the connection ids the apply registered, updated and removed, the
// effective connection count, the registry's entry count, and auth
// findings (an auth_ref naming no record).
type ApplyRegistryChangesResult struct {
	Applied            bool             `json:"applied"`
	Registered         []string         `json:"registered"`
	Updated            []string         `json:"updated"`
	Removed            []string         `json:"removed"`
	ConnectionCount    int              `json:"connection_count"`
	RegistryEntryCount int              `json:"registry_entry_count"`
	AuthDiagnostics    []DependencyDiag `json:"auth_diagnostics"`
}
