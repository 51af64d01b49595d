// mcptasks.mjs drives mcpflow's MCP face as a requester of the tasks
// extension (io.modelcontextprotocol/tasks, 2026-07-28) with the
// extension's own library, npm @modelcontextprotocol/ext-tasks@0.2.2, on
// @modelcontextprotocol/client@2.3.1: createTaskSessionFromClient with
// its 2026-07-28 framing (rawDispatch, v2RequestFraming). It prints ONE
// JSON object with what the library saw on stdout and asserts nothing:
// integration/mcp_tasks_client_test.go checks every value.
//
// Usage: node mcptasks.mjs '<scenario JSON>'
//
//   {"url": "http://127.0.0.1:PORT/mcp",
//    "token": "...",                       // Authorization: Bearer
//    "answer": {"approved": true, ...},    // the content every elicitation is accepted with
//    "steps": [
//      {"op": "run", "tool": "t", "arguments": {}},    // call as a task, settle
//      {"op": "cancel", "tool": "t", "arguments": {}}, // call as a task, cancel it, settle
//      {"op": "create", "tool": "t", "arguments": {}}, // call as a task, hand its reference off
//      {"op": "recover", "reference": {...}}]}         // resume a task by reference, settle
//
// Each step gives {kind, task_id, status, result, error, reference}; the
// whole: {"protocol_version", "task_generation", "steps", "inputs"}, inputs
// being the input requests the library handed the application.
//
// The packages are loaded from the npm install prefix $MCPFLOW_PEERS
// (default: <module root>/.peers), as .ci/run installs them, as ES
// modules: the library and the client must share one copy of the SDK.

import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const WATCHDOG_MS = 60_000;
setTimeout(() => {
  process.stderr.write("mcptasks.mjs: watchdog\n");
  process.exit(2);
}, WATCHDOG_MS).unref();

const here = path.dirname(fileURLToPath(import.meta.url));
const prefix = path.resolve(process.env.MCPFLOW_PEERS || path.join(here, "..", "..", ".peers"));
const peer = (file) => import(pathToFileURL(path.join(prefix, "node_modules", file)).href);
const { Client, StreamableHTTPClientTransport } = await peer("@modelcontextprotocol/client/dist/index.mjs");
const { createTaskSessionFromClient, resultFromTaskOutcome, DispatchError } = await peer("@modelcontextprotocol/ext-tasks/dist/client/index.js");

const scenario = JSON.parse(process.argv[2]);
const clientInfo = { name: "mcpflow-test-ext-tasks", version: "0.2.2" };
const capabilities = { elicitation: { form: {} } };
const auth = scenario.token ? { Authorization: `Bearer ${scenario.token}` } : {};

// rawDispatch sends one request of the library as the 2026-07-28
// streamable HTTP transport does: its routing headers (Mcp-Method, and
// Mcp-Name: the tool's, or the task id the library sets), and reads the
// one answer, JSON or an event stream.
let nextId = 1000;
async function rawDispatch(request, options = {}) {
  const headers = {
    "Content-Type": "application/json", Accept: "application/json, text/event-stream",
    "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": request.method, ...auth,
    ...(options.context?.headers ?? {}),
  };
  if (request.method === "tools/call") headers["Mcp-Name"] = request.params.name;
  const id = nextId++;
  const resp = await fetch(scenario.url, {
    method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id, ...request }), signal: options.signal,
  });
  const text = await resp.text();
  let answer;
  if ((resp.headers.get("content-type") ?? "").includes("text/event-stream")) {
    for (const line of text.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const msg = JSON.parse(line.slice(5));
      if (msg.id === id) answer = msg;
    }
  } else if (text !== "") {
    answer = JSON.parse(text);
  }
  if (answer === undefined) throw new DispatchError(`${request.method}: no answer (HTTP ${resp.status})`);
  return answer.error ? { kind: "error", error: answer.error } : { kind: "result", result: answer.result };
}

const inputs = [];
const errors = [];
const client = new Client(clientInfo, { capabilities, versionNegotiation: { mode: "auto" } });
await client.connect(new StreamableHTTPClientTransport(new URL(scenario.url), { requestInit: { headers: auth } }));
const protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
const session = createTaskSessionFromClient(client, {
  endpointId: "mcpflow-test",
  rawDispatch,
  v2RequestFraming: { protocolVersion, clientInfo, clientCapabilities: capabilities },
  onInputRequest: async (request, context) => {
    inputs.push({ kind: request.kind, message: request.params?.message ?? null, scope: context.scope, input_id: context.inputId, task_id: context.taskId ?? null });
    return { action: "accept", content: scenario.answer ?? {} };
  },
  onError: (error) => errors.push(String(error?.message ?? error)),
});

// settled is what a settled execution gives.
async function settled(execution) {
  const { outcome } = await execution.settle();
  const out = { status: outcome.status };
  if (outcome.status === "completed") out.result = resultFromTaskOutcome(outcome);
  if (outcome.status === "failed") out.error = String(outcome.error?.message ?? outcome.error);
  return out;
}

const steps = [];
for (const step of scenario.steps) {
  try {
    if (step.op === "recover") {
      const execution = await session.resumeTask(step.reference);
      steps.push({ kind: execution.kind, task_id: execution.handle?.taskId ?? null, ...(await settled(execution)) });
      continue;
    }
    const execution = await session.callTool(step.tool, step.arguments ?? {});
    const got = { kind: execution.kind, task_id: execution.handle?.taskId ?? null };
    if (step.op === "create") {
      await execution.handoff((reference) => { got.reference = reference; });
    } else if (step.op === "cancel") {
      await execution.cancel();
      Object.assign(got, await settled(execution));
    } else {
      Object.assign(got, await settled(execution));
    }
    steps.push(got);
  } catch (error) {
    steps.push({ error: `${error?.name}: ${error?.message ?? error}` });
  }
}
await session.close();
await client.close();
process.stdout.write(JSON.stringify({
  protocol_version: protocolVersion,
  capabilities: session.capabilities,
  steps, inputs, errors,
}));
process.exit(0);
