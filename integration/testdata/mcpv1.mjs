// mcpv1.mjs drives mcpflow's MCP face with the v1 TypeScript SDK, npm
// @modelcontextprotocol/sdk@1.32.2: a 2025-11-25 session over streamable
// HTTP (StreamableHTTPClientTransport) or over stdio
// (StdioClientTransport, for `mcpflow mcp`). The scenario and the result
// are mcpdriver.mjs's.
//
// Usage: node mcpv1.mjs '<scenario JSON>'
//
// The SDK is loaded from the npm install prefix $MCPFLOW_PEERS (default:
// <module root>/.peers), as .ci/run installs it.

import { peerRequire, run } from "./mcpdriver.mjs";

const require = peerRequire();
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { CreateMessageRequestSchema, ElicitRequestSchema, ToolListChangedNotificationSchema } = require("@modelcontextprotocol/sdk/types.js");

let client, transport;

await run({
  async connect(scenario, hooks) {
    const capabilities = scenario.elicitation ? { elicitation: { form: {} } } : {};
    if (scenario.sampling) capabilities.sampling = {};
    client = new Client({ name: "mcpflow-test-v1", version: "1.32.2" }, { capabilities });
    if (scenario.elicitation) {
      client.setRequestHandler(ElicitRequestSchema, async (request) => hooks.onElicit(request.params));
    }
    if (scenario.sampling) {
      client.setRequestHandler(CreateMessageRequestSchema, async (request) => hooks.onSample(request.params));
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => hooks.onListChanged());
    if (scenario.stdio) {
      transport = new StdioClientTransport({
        command: scenario.stdio.command, args: scenario.stdio.args ?? [],
        env: { ...process.env, ...(scenario.stdio.env ?? {}) }, stderr: "inherit",
      });
    } else {
      const headers = scenario.token ? { Authorization: `Bearer ${scenario.token}` } : {};
      transport = new StreamableHTTPClientTransport(new URL(scenario.url), { requestInit: { headers } });
    }
    await client.connect(transport);
  },
  protocolVersion: () => transport.protocolVersion ?? null,
  server: () => client.getServerVersion() ?? null,
  list: () => client.listTools(),
  // A 2025 session gets list_changed on its standalone stream.
  listen: async () => {},
  call: (params, options) => client.callTool(params, undefined, options),
  resources: () => client.listResources(),
  templates: () => client.listResourceTemplates(),
  read: (params) => client.readResource(params),
  endSession: () => transport.terminateSession(),
  close: () => client.close(),
});
