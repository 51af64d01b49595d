// mcpv2.mjs drives mcpflow's MCP face with the v2 TypeScript SDK, npm
// @modelcontextprotocol/client@2.3.1, with versionNegotiation auto: it
// probes server/discover and speaks 2026-07-28 to a server that offers it
// (elicitation through input_required, list_changed through
// subscriptions/listen). Streamable HTTP, or stdio with
// {"stdio": {...}}. The scenario and the result are mcpdriver.mjs's.
//
// Usage: node mcpv2.mjs '<scenario JSON>'
//
// The SDK is loaded from the npm install prefix $MCPFLOW_PEERS (default:
// <module root>/.peers), as .ci/run installs it.

import { peerRequire, run } from "./mcpdriver.mjs";

const require = peerRequire();
const { Client, StreamableHTTPClientTransport } = require("@modelcontextprotocol/client");
const { StdioClientTransport } = require("@modelcontextprotocol/client/stdio");

let client, subscription;

await run({
  async connect(scenario, hooks) {
    const capabilities = scenario.elicitation ? { elicitation: { form: {} } } : {};
    client = new Client({ name: "mcpflow-test-v2", version: "2.3.1" }, { capabilities, versionNegotiation: { mode: "auto" } });
    if (scenario.elicitation) {
      client.setRequestHandler("elicitation/create", async (request) => hooks.onElicit(request.params));
    }
    client.setNotificationHandler("notifications/tools/list_changed", async () => hooks.onListChanged());
    let transport;
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
  protocolVersion: () => client.getNegotiatedProtocolVersion() ?? null,
  server: () => client.getServerVersion() ?? null,
  list: () => client.listTools(undefined, { cacheMode: "bypass" }),
  // 2026-07-28 delivers list_changed on a subscriptions/listen stream; a
  // legacy session on its standalone stream.
  listen: async () => {
    if (client.getProtocolEra() === "modern") {
      subscription = await client.listen({ toolsListChanged: true });
    }
  },
  call: (params, options) => client.callTool(params, options),
  resources: () => client.listResources(undefined, { cacheMode: "bypass" }),
  templates: () => client.listResourceTemplates(undefined, { cacheMode: "bypass" }),
  read: (params) => client.readResource(params),
  close: async () => {
    if (subscription) await subscription.close();
    await client.close();
  },
});
