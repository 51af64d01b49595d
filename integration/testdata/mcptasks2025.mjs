// mcptasks2025.mjs drives mcpflow's MCP face through the experimental
// tasks of 2025-11-25 with the v1 TypeScript SDK, npm
// @modelcontextprotocol/sdk@1.32.2 (client.experimental.tasks). It prints
// ONE JSON object with what the client saw on stdout and asserts nothing:
// integration/mcp_tasks_client_test.go checks every value.
//
// Usage: node mcptasks2025.mjs '<scenario JSON>'
//
//   {"url": "http://127.0.0.1:PORT/mcp",
//    "answer": {...},   // the content every elicitation is accepted with
//    "steps": [
//      {"op": "stream", "tool": "t", "arguments": {}}, // callToolStream to its end
//      {"op": "cancel", "tool": "t", "arguments": {}}, // callToolStream to taskCreated, cancelTask, getTask
//      {"op": "fetch", "from": 0}]}                     // getTask and getTaskResult of step 0's task
//
// Each step gives {messages: [types], task_id, statuses, result, error,
// cancelled, task}; the whole: {"capabilities", "task_support", "steps",
// "elicitations"}.
//
// The SDK is loaded from the npm install prefix $MCPFLOW_PEERS (default:
// <module root>/.peers), as .ci/run installs it.

import { peerRequire } from "./mcpdriver.mjs";

setTimeout(() => {
  process.stderr.write("mcptasks2025.mjs: watchdog\n");
  process.exit(2);
}, 60_000).unref();

const require = peerRequire();
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { CallToolResultSchema, ElicitRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

const scenario = JSON.parse(process.argv[2]);
const elicitations = [];
const client = new Client({ name: "mcpflow-test-tasks-2025", version: "1.32.2" }, { capabilities: { elicitation: { form: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitations.push({ message: request.params.message, related_task: request.params._meta?.["io.modelcontextprotocol/related-task"] ?? null });
  return { action: "accept", content: scenario.answer ?? {} };
});
const transport = new StreamableHTTPClientTransport(new URL(scenario.url));
await client.connect(transport);
const tools = await client.listTools();
const taskSupport = Object.fromEntries(tools.tools.map((t) => [t.name, t.execution?.taskSupport ?? null]));
const tasks = client.experimental.tasks;

const steps = [];
for (const step of scenario.steps) {
  const got = { messages: [], statuses: [] };
  try {
    if (step.op === "fetch") {
      const id = steps[step.from].task_id;
      got.task_id = id;
      got.task = await tasks.getTask(id);
      got.result = await tasks.getTaskResult(id, CallToolResultSchema);
    } else {
      for await (const message of tasks.callToolStream({ name: step.tool, arguments: step.arguments ?? {} })) {
        got.messages.push(message.type);
        if (message.type === "taskCreated") got.task_id = message.task.taskId;
        if (message.type === "taskStatus") got.statuses.push(message.task.status);
        if (message.type === "result") got.result = message.result;
        if (message.type === "error") got.error = String(message.error?.message ?? message.error);
        if (step.op === "cancel" && message.type === "taskCreated") {
          got.cancelled = await tasks.cancelTask(got.task_id);
          got.task = await tasks.getTask(got.task_id);
          break;
        }
      }
    }
  } catch (error) {
    got.error = `${error?.name}: ${error?.message ?? error}`;
  }
  steps.push(got);
}
await transport.terminateSession().catch(() => {});
await client.close();
process.stdout.write(JSON.stringify({
  capabilities: client.getServerCapabilities()?.tasks ?? null, task_support: taskSupport, steps, elicitations,
}));
process.exit(0);
