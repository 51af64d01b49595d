package protocol

// The resources of a connection exposed through the MCP face with
// "resources": true (server.mcp.expose): the face lists them and reads
// them through these methods (extensions), as it calls an exposed tool
// through workflow.runs.passthrough.
const (
	// MethodSourcesResources lists the resources an exposed connection's
	// catalog holds.
	MethodSourcesResources = "workflow.sources.resources"
	// MethodSourcesReadResource reads one resource of an exposed
	// connection through its shared session.
	MethodSourcesReadResource = "workflow.sources.read_resource"
)

// SourceResourcesParams are the params of workflow.sources.resources.
type SourceResourcesParams struct {
	SourceID string `json:"source_id"`
}

// SourceResourcesResult is the result of workflow.sources.resources:
// the resources and resource templates of the connection's catalog, in
// the order the upstream listed them.
type SourceResourcesResult struct {
	Resources         []SourceResource         `json:"resources"`
	ResourceTemplates []SourceResourceTemplate `json:"resource_templates"`
}

// SourceResourceTemplate is one upstream resource template as the
// connection's catalog holds it.
type SourceResourceTemplate struct {
	URITemplate string  `json:"uri_template"`
	Name        string  `json:"name"`
	Title       *string `json:"title,omitempty"`
	Description *string `json:"description,omitempty"`
	MIMEType    *string `json:"mime_type,omitempty"`
}

// SourceResource is one upstream resource as the connection's catalog
// holds it.
type SourceResource struct {
	URI         string  `json:"uri"`
	Name        string  `json:"name"`
	Title       *string `json:"title,omitempty"`
	Description *string `json:"description,omitempty"`
	MIMEType    *string `json:"mime_type,omitempty"`
}

// ReadSourceResourceParams are the params of
// workflow.sources.read_resource.
type ReadSourceResourceParams struct {
	SourceID string `json:"source_id"`
	URI      string `json:"uri"`
}

// ReadSourceResourceResult is the upstream's ReadResourceResult: its
// contents, each as MCP has it (uri, mimeType, text or blob).
type ReadSourceResourceResult struct {
	Contents []Object `json:"contents"`
}
