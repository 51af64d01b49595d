package integration

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflow/mcpflow/actors/config"
	"github.com/mcpflow/mcpflow/fakes/poll"
)

// TestMCPGatewayOffersAnUpstreamsResourcesAndPrompts: with npm
// server-everything exposed under the prefix "ev" with "resources": true
// and "prompts": true, its prompts are listed "ev_…" with their
// arguments, simple-prompt and args-prompt render through the face, and
// the arguments of completable-prompt and of a resource template
// complete through the face with the upstream's values. Its resources: go-sdk's client
// lists its static documents and its resource templates on /mcp under
// their own URIs, named "ev_…"; it reads a document through the face, and
// the resource links of an exposed tool's result (dynamic resources of a
// template) resolve through the face. Every read goes through the
// connection's one session (sessions_opened 1). A resource the upstream
// adds reaches the client as resources/list_changed. The TypeScript SDK
// (2025-11-25) and client (2026-07-28) list and read the same.
func TestMCPGatewayOffersAnUpstreamsResourcesAndPrompts(t *testing.T) {
	t.Parallel() // its own mcpflow and upstream: see parallelTests
	is := is.New(t)
	f := startFace(t, faceOptions{everything: true, mcp: &config.MCP{Expose: []config.MCPExpose{{
		Connection: faceEverything, Prefix: "ev", Resources: true, Prompts: true,
		Tools: &config.MCPToolFilter{Allow: []string{"get-resource-links", "gzip-file-as-resource"}},
	}}}})
	_, err := f.ws.RefreshConnectionCatalog(testContext(t), faceEverything)
	is.NoErr(err)

	ctx := testContext(t)
	changed := make(chan struct{}, 16)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpflow-test-go", Version: "v1.8.0"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default: // one is enough to know
			}
		},
	}).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.mcp, HTTPClient: bearerClient(f.token), MaxRetries: -1}, nil)
	is.NoErr(err) // connect to /mcp
	t.Cleanup(func() { _ = cs.Close() })
	is.True(cs.InitializeResult().Capabilities.Resources != nil && cs.InitializeResult().Capabilities.Resources.ListChanged)

	const docs = "demo://resource/static/document/"
	var resources []*mcp.Resource
	poll.For(t, "/mcp lists server-everything's documents", settleWait, func() bool {
		resources = resources[:0]
		for r, err := range cs.Resources(ctx, nil) {
			is.NoErr(err)
			resources = append(resources, r)
		}
		return slices.ContainsFunc(resources, func(r *mcp.Resource) bool { return strings.HasPrefix(r.URI, docs) })
	})
	for _, r := range resources {
		is.True(strings.HasPrefix(r.Name, "ev_")) // prefixed names, the upstream's URIs
	}
	var templates []string
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		is.NoErr(err)
		is.True(strings.HasPrefix(r.Name, "ev_"))
		templates = append(templates, r.URITemplate)
	}
	t.Logf("templates: %v", templates)
	is.True(slices.Contains(templates, "demo://resource/dynamic/text/{resourceId}"))

	doc := resources[slices.IndexFunc(resources, func(r *mcp.Resource) bool { return strings.HasPrefix(r.URI, docs) })]
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: doc.URI})
	is.NoErr(err) // read through the face
	is.Equal(read.Contents[0].URI, doc.URI)
	is.True(read.Contents[0].Text != "") // the document's text

	links, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ev_get-resource-links", Arguments: map[string]any{"count": 2}})
	is.NoErr(err)
	is.True(!links.IsError)
	var linked int
	for _, c := range links.Content {
		link, ok := c.(*mcp.ResourceLink)
		if !ok {
			continue
		}
		linked++
		read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI})
		is.NoErr(err) // a resource link of an exposed tool's result resolves through the face
		is.Equal(read.Contents[0].URI, link.URI)
		is.True(read.Contents[0].Text != "" || len(read.Contents[0].Blob) > 0)
	}
	is.Equal(linked, 2)
	is.Equal(f.sessionsOpened(t, faceEverything), 1) // the reads and the call went through the one session

	// Its prompts, prefixed, rendered through the one session.
	var prompts []string
	for p, err := range cs.Prompts(ctx, nil) {
		is.NoErr(err)
		prompts = append(prompts, p.Name)
		if p.Name == "ev_args-prompt" {
			is.True(slices.ContainsFunc(p.Arguments, func(a *mcp.PromptArgument) bool { return a.Name == "city" && a.Required }))
		}
	}
	t.Logf("prompts: %v", prompts)
	is.True(slices.Contains(prompts, "ev_simple-prompt"))
	simple, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "ev_simple-prompt"})
	is.NoErr(err) // rendered through the face
	is.True(len(simple.Messages) > 0)
	is.Equal(simple.Messages[0].Role, mcp.Role("user"))
	is.True(simple.Messages[0].Content.(*mcp.TextContent).Text != "")
	args, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "ev_args-prompt", Arguments: map[string]string{"city": "Lisbon"}})
	is.NoErr(err)
	is.True(strings.Contains(args.Messages[0].Content.(*mcp.TextContent).Text, "Lisbon")) // the arguments reached the server
	// Their arguments, and those of its resource templates, complete
	// through the one session: the upstream's own completions.
	completed, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "ev_completable-prompt"},
		Argument: mcp.CompleteParamsArgument{Name: "department", Value: "E"}})
	is.NoErr(err)
	is.Equal(completed.Completion.Values, []string{"Engineering"})
	completed, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "ev_completable-prompt"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"}, Context: &mcp.CompleteContext{Arguments: map[string]string{"department": "Engineering"}}})
	is.NoErr(err)
	is.Equal(completed.Completion.Values, []string{"Alice"}) // the context reached the server
	completed, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "demo://resource/dynamic/text/{resourceId}"},
		Argument: mcp.CompleteParamsArgument{Name: "resourceId", Value: "3"}})
	is.NoErr(err)
	is.Equal(completed.Completion.Values, []string{"3"}) // a resource template's argument
	_, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "ev_no-such-prompt"},
		Argument: mcp.CompleteParamsArgument{Name: "x", Value: ""}})
	is.True(err != nil) // -32602: not a prompt the face offers
	is.Equal(f.sessionsOpened(t, faceEverything), 1)

	// A resource the upstream adds (a session resource of the shared
	// session) reaches the client as resources/list_changed, and is
	// listed and read through the face.
	for len(changed) > 0 {
		<-changed // those of the listings above
	}
	const added = "demo://resource/session/hello.txt.gz"
	gz, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ev_gzip-file-as-resource",
		Arguments: map[string]any{"name": "hello.txt.gz", "data": "data:text/plain;base64,aGVsbG8="}})
	is.NoErr(err)
	is.True(!gz.IsError)
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/resources/list_changed from the face")
	}
	poll.For(t, "/mcp lists "+added, settleWait, func() bool {
		for r, err := range cs.Resources(ctx, nil) {
			if err == nil && r.URI == added {
				return true
			}
		}
		return false
	})
	read, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: added})
	is.NoErr(err) // the new resource, read through the one session
	is.True(len(read.Contents[0].Blob) > 0)

	// The TypeScript clients, on 2025-11-25 and 2026-07-28, list and read
	// the same: a document, and a dynamic resource through its template.
	const dynamic = "demo://resource/dynamic/text/1"
	for _, c := range []mcpClient{tsV1, tsV2} {
		c.require(t)
		got := c.run(t, f.scenario(step{Op: "resources"}, step{Op: "read", Name: doc.URI}, step{Op: "read", Name: dynamic}))
		is.Equal(got.Fatal, (*driverError)(nil))
		listed := got.Steps[0]
		is.Equal(listed.Error, (*driverError)(nil))
		is.True(slices.ContainsFunc(listed.Resources, func(r resourceInfo) bool { return r.URI == doc.URI && r.Name == doc.Name }))
		is.True(slices.ContainsFunc(listed.ResourceTemplates, func(r resourceInfo) bool {
			return r.URITemplate == "demo://resource/dynamic/text/{resourceId}" && strings.HasPrefix(r.Name, "ev_")
		}))
		for i, uri := range []string{doc.URI, dynamic} {
			read := got.Steps[1+i]
			is.Equal(read.Error, (*driverError)(nil)) // read through the face
			is.Equal(read.Contents[0].URI, uri)
			is.True(read.Contents[0].Text != "")
		}
	}
}
