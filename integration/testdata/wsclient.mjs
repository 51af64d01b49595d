// wsclient.mjs drives mcpflow's JSON-RPC 2.0 over WebSocket edge with a
// third-party client stack: npm json-rpc-2.0@1.8.1 (JSONRPCClient) over
// npm ws@8. It runs the README walkthrough against source demo.default,
// sends one batch, two notifications, one request with a string id and one
// with an unknown param key, starts a run with wait: false and follows it
// through workflow.runs.subscribe, and prints ONE JSON object summarising
// what it saw on stdout. Values are checked by integration/clients_test.go;
// this script exits non-zero only when something fails that should not (a
// transport error, a walkthrough step answered with an error, a timeout).
//
// Usage: node wsclient.mjs ws://127.0.0.1:PORT/ws
//
// The modules are loaded from the npm install prefix $MCPFLOW_PEERS
// (default: <module root>/.peers), so nothing is installed in the repo:
//
//   npm install --prefix .peers --no-audit --no-fund json-rpc-2.0@1.8.1 ws@8

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const prefix = path.resolve(process.env.MCPFLOW_PEERS || path.join(here, "..", "..", ".peers"));
// createRequire resolves bare names from the given file's directory, so
// from <prefix>/node_modules.
const require = createRequire(path.join(prefix, "package.json"));
const { JSONRPCClient, JSONRPCErrorException } = require("json-rpc-2.0");
const WebSocket = require("ws");

const url = process.argv[2];
if (!url) {
  console.error("usage: node wsclient.mjs ws://HOST:PORT/ws");
  process.exit(2);
}

// Whole-script bound: the Go test kills us at 60 s; fail clearly first.
const watchdog = setTimeout(() => {
  console.error("wsclient: gave up after 45 s");
  process.exit(3);
}, 45_000);

const REQUEST_TIMEOUT_MS = 20_000;
const SOURCE = "demo.default";
const COUNTER = `${SOURCE}.counter`;

// Everything the socket delivered, for the summary: the subscription's
// notifications (json-rpc-2.0 leaves routing notifications to the app) in
// live, the rest of the server's pushes and stray replies in unmatched.
const seen = { frames: 0, arrayFrames: [], unmatched: [], live: [] };
const LIVE_METHODS = new Set(["workflow.runs.event", "workflow.runs.lagged"]);
const isLive = (r) => !!r && typeof r === "object" && LIVE_METHODS.has(r.method) && !("id" in r);
let liveEnded = null; // resolves once the run's terminal event or a lag arrives

const ws = new WebSocket(url);
let nextID = 0;
const client = new JSONRPCClient((payload) => {
  if (ws.readyState !== WebSocket.OPEN) {
    throw new Error(`socket not open (readyState ${ws.readyState})`);
  }
  ws.send(JSON.stringify(payload));
}, () => ++nextID);
const pending = new Set(); // ids we sent and have not had answered

ws.on("message", (data, isBinary) => {
  seen.frames++;
  let msg;
  try {
    msg = JSON.parse(data.toString("utf8"));
  } catch (e) {
    seen.unmatched.push({ unparsable: data.toString("utf8").slice(0, 200), binary: isBinary });
    return;
  }
  const items = Array.isArray(msg) ? msg : [msg];
  if (Array.isArray(msg)) {
    seen.arrayFrames.push(items.map((r) => r && r.id));
  }
  for (const r of items) {
    if (isLive(r)) {
      seen.live.push(r);
      const ended = r.method === "workflow.runs.lagged" || (r.params && r.params.status && r.params.status.terminal);
      if (ended && liveEnded) liveEnded.resolve();
      continue;
    }
    // A server request or notification (has a method), or a response to
    // nothing we sent (a reply to a notification, an id we never used).
    if (!r || typeof r !== "object" || "method" in r || !pending.has(r.id)) {
      seen.unmatched.push(r);
    } else {
      pending.delete(r.id);
    }
  }
  const replies = items.filter((r) => !isLive(r));
  if (replies.length > 0) client.receive(Array.isArray(msg) ? replies : replies[0]);
});
ws.on("error", (err) => {
  client.rejectAllPendingRequests(`websocket error: ${err.message}`);
});
ws.on("close", (code) => {
  client.rejectAllPendingRequests(`websocket closed (${code})`);
});

const timed = client.timeout(REQUEST_TIMEOUT_MS);

// call sends one request and returns its result; any error is unexpected.
async function call(method, params) {
  const id = nextID + 1; // the id createID will hand out
  pending.add(id);
  try {
    return await timed.request(method, params);
  } catch (e) {
    throw new Error(`${method}: ${describe(e)}`);
  }
}

// callFailing sends one request that must fail and returns its error.
async function callFailing(method, params) {
  pending.add(nextID + 1);
  try {
    const result = await timed.request(method, params);
    return { code: null, result };
  } catch (e) {
    if (e instanceof JSONRPCErrorException) {
      return { code: e.code, message: e.message, data: e.data ?? null };
    }
    throw new Error(`${method}: ${describe(e)}`);
  }
}

// advanced sends one request or a batch, built by hand, via requestAdvanced.
async function advanced(requests) {
  for (const r of Array.isArray(requests) ? requests : [requests]) {
    if (r.id !== undefined && r.id !== null) pending.add(r.id);
  }
  return timed.requestAdvanced(requests);
}

function describe(e) {
  if (e instanceof JSONRPCErrorException) {
    return `JSON-RPC error ${e.code} ${e.message} ${JSON.stringify(e.data ?? null)}`;
  }
  return e && e.stack ? e.stack : String(e);
}

function opened() {
  return new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
    ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
  });
}

function closed() {
  return new Promise((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) return resolve();
    ws.once("close", resolve);
    ws.close(1000, "done");
  });
}

async function main() {
  await opened();
  const summary = {};

  // Notifications are never answered, not even an unknown method.
  client.notify("workflow.health");
  client.notify("workflow.no_such_notification", { x: 1 });

  // 1. List what demo.default offers. mcpflow fetches a cold catalog in
  // the background at start, so a client that connects at once may list
  // before that finished; then refresh and list again.
  const listParams = { source_id: SOURCE };
  let listed = await call("workflow.capabilities.list", listParams);
  summary.listed_before_refresh = listed.capabilities.some((c) => c.name === COUNTER);
  if (!summary.listed_before_refresh) {
    summary.refresh = await call("workflow.admin.connections.refresh_catalog", { connection_id: SOURCE });
    listed = await call("workflow.capabilities.list", listParams);
  }
  summary.capabilities = listed.capabilities.map((c) => c.name);
  summary.capabilities_total = listed.total;
  const counter = listed.capabilities.find((c) => c.name === COUNTER) || null;
  summary.counter = counter && { source_id: counter.source_id, outcomes: counter.outcomes, output_fields: counter.output_fields };

  // 2. Scaffold a workflow around the counter tool.
  const ws1 = await call("workflow.draft_workspaces.create_from_capability", {
    workspace_id: "counter_ws", capability_name: COUNTER, name: "counter_workflow", title: "Counter Workflow",
  });
  summary.workspace = { status: ws1.status, revision: ws1.revision, steps: ws1.summary && ws1.summary.steps };

  // 3. Save it as an artifact and deploy it.
  const art = await call("workflow.draft_workspaces.create_artifact", {
    workspace_id: "counter_ws", artifact_id: "counter_workflow", version: 1, title: "Counter Workflow", outcomes: ["ok", "error"],
  });
  summary.artifact = { saved: art.saved, required_logical_sources: art.required_logical_sources, suggested_bindings: art.suggested_bindings };
  const dep = await call("workflow.deployments.save", {
    deployment: {
      id: "counter_workflow.default", artifact_id: "counter_workflow", artifact_version: 1,
      bindings: [{ logical_source: SOURCE, concrete_source: SOURCE }],
    },
  });
  summary.deployment = { id: dep.deployment_id, saved: dep.saved };

  // 4. Run it twice: one upstream session, so the count goes 1, 2.
  const run1 = await call("workflow.runs.start", { deployment_id: dep.deployment_id, workflow_input: {} });
  const run2 = await call("workflow.runs.start", { deployment_id: dep.deployment_id, trace_range: { limit: 5 } });
  const runs = [run1, run2];
  summary.statuses = runs.map((r) => r.status);
  summary.outcomes = runs.map((r) => r.outcome);
  summary.counts = runs.map((r) => (r.output ? r.output.count : null));
  summary.trace_nodes = (run2.trace || []).map((s) => s.node_id);

  // 5. The connection's one session.
  const st = await call("workflow.admin.connection_statuses.list", {});
  const demo = st.statuses.find((s) => s.connection_id === SOURCE);
  summary.session = demo ? demo.session : null;

  // 6. A batch: one known method, one unknown. json-rpc-2.0 resolves it
  // once every id is answered; the socket listener saw whether the
  // replies came back as one array.
  const batch = [
    { jsonrpc: "2.0", id: ++nextID, method: "workflow.health" },
    { jsonrpc: "2.0", id: ++nextID, method: "workflow.no_such_method", params: {} },
  ];
  const before = seen.arrayFrames.length;
  const replies = await advanced(batch);
  const byID = new Map(replies.map((r) => [r.id, r]));
  summary.batch = batch.map((req) => {
    const r = byID.get(req.id);
    return {
      method: req.method,
      answered: !!r,
      result: r && r.result !== undefined ? r.result : null,
      code: r && r.error ? r.error.code : null,
    };
  });
  const arrays = seen.arrayFrames.slice(before);
  summary.batch_as_one_array = arrays.length === 1 && arrays[0].length === batch.length &&
    batch.every((req) => arrays[0].includes(req.id));

  // 7. A string id must come back as the same string.
  const sid = `s-${process.pid}`;
  const echoed = await advanced({ jsonrpc: "2.0", id: sid, method: "workflow.health" });
  summary.string_id_echoed = echoed.id === sid && typeof echoed.id === "string" && !!echoed.result;

  // 8. An unknown param key is -32602, and the connection keeps working.
  const bad = await callFailing("workflow.runs.start", { deployment_id: dep.deployment_id, oops: 1 });
  summary.invalid_params_code = bad.code;
  summary.invalid_params_data = bad.data ?? null;
  const after = await call("workflow.health");
  summary.health_after_error = after.status;

  // 9. Follow a run live: start it without waiting, subscribe, and collect
  // its events until the one that ends it.
  let resolveEnded;
  const ended = new Promise((resolve) => { resolveEnded = resolve; });
  liveEnded = { resolve: resolveEnded };
  const live = await call("workflow.runs.start", { deployment_id: dep.deployment_id, wait: false });
  const sub = await call("workflow.runs.subscribe", { run_id: live.run_id });
  let timer;
  const gaveUp = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`run ${live.run_id}: no terminal event within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS);
  });
  await Promise.race([ended, gaveUp]);
  clearTimeout(timer);
  const last = seen.live[seen.live.length - 1];
  summary.live = {
    start_status: live.status,
    run_id: live.run_id,
    subscription: { active: sub.active, run_id: sub.run_id },
    methods: [...new Set(seen.live.map((n) => n.method))],
    ours: seen.live.every((n) => n.params.subscription_id === sub.subscription_id && n.params.run_id === live.run_id),
    sequences: seen.live.map((n) => n.params.sequence),
    kinds: seen.live.map((n) => n.params.kind),
    final_status: last && last.params.status ? last.params.status : null,
  };

  await closed();
  summary.frames_received = seen.frames;
  summary.unmatched_frames = seen.unmatched; // replies to notifications, server pushes
  summary.unanswered_ids = [...pending];
  return summary;
}

try {
  const summary = await main();
  process.stdout.write(JSON.stringify(summary) + "\n");
  clearTimeout(watchdog);
} catch (e) {
  console.error(`wsclient: ${describe(e)}`);
  console.error(`wsclient: frames received ${seen.frames}, unmatched ${JSON.stringify(seen.unmatched)}`);
  ws.terminate();
  clearTimeout(watchdog);
  process.exitCode = 1;
}
