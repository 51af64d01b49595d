// mcpdriver.mjs runs one scenario against mcpflow's MCP face through a
// client adapter (mcpv1.mjs: @modelcontextprotocol/sdk; mcpv2.mjs:
// @modelcontextprotocol/client) and prints ONE JSON object with what the
// client saw on stdout. It asserts nothing: integration/mcp_face_test.go
// checks every value. It exits non-zero only when the scenario cannot be
// run at all (a bad scenario, a failed connect, the watchdog).
//
// The scenario is JSON, on argv[2] or, if absent, on stdin:
//
//   {"url": "http://127.0.0.1:PORT/mcp"            // streamable HTTP, or
//    "stdio": {"command": "...", "args": [...]},     // a stdio server
//    "token": "...",                                 // Authorization: Bearer
//    "elicitation": true,                            // declare form elicitation
//    "elicit": [{"action": "accept", "content": {}}],// answers, in order (the last repeats)
//    "sampling": true,                               // declare sampling (mcpv1.mjs)
//    "sample": {"role": "assistant", ...},           // the answer to every sampling request
//    "steps": [
//      {"op": "list"},
//      {"op": "call", "name": "t", "arguments": {}, "progress": true,
//       "run_id_from": 1,   // arguments.run_id = the run_id in step 1's structuredContent
//       "abort": "stdin"},  // once sent, mark "in_flight", then abort on a stdin line
//      {"op": "listen"},            // be ready for tools/list_changed (2026: subscriptions/listen)
//      {"op": "mark", "name": "x"}, // tell the test, then go on
//      {"op": "wait"},              // wait for a stdin line (the session stays open)
//      {"op": "await_list_changed", "tool": "t"}, // until a listing has tool t
//      {"op": "resources"},          // resources/list and resources/templates/list
//      {"op": "read", "name": "uri"}]} // resources/read
//
// Marks go to stderr as lines "@mark NAME"; a test that waits for one
// reads stderr. "abort": "stdin" and "wait" read one line from stdin each
// (so the scenario must then be on argv).
//
// The result: {"protocol_version", "server", "steps": [...], "elicitations":
// [...], "samplings": [...], "list_changed": N}, one entry per step: list → {tools}; call →
// {result, error, progress, progress_at_result, aborted}; listen →
// {listening}; await_list_changed → {changed, tools}; resources →
// {resources, resource_templates}; read → {contents} (or {error}).

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { createInterface } from "node:readline";

const WAIT_MS = 20_000; // the bound of every wait of a step

// peerRequire loads packages from the npm install prefix $MCPFLOW_PEERS
// (default: <module root>/.peers), as .ci/run installs them.
export function peerRequire() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const prefix = path.resolve(process.env.MCPFLOW_PEERS || path.join(here, "..", "..", ".peers"));
  return createRequire(path.join(prefix, "package.json"));
}


export function mark(name) {
  process.stderr.write(`@mark ${name}\n`);
}

// stdinLines hands out stdin's lines one at a time.
function stdinLines() {
  let rl = null;
  const queued = [];
  const waiting = [];
  return () => {
    if (!rl) {
      rl = createInterface({ input: process.stdin });
      rl.on("line", (line) => (waiting.length ? waiting.shift()(line) : queued.push(line)));
    }
    return queued.length ? Promise.resolve(queued.shift()) : new Promise((resolve) => waiting.push(resolve));
  };
}

async function readAll(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function describe(e) {
  if (!e || typeof e !== "object") return { message: String(e) };
  return { name: e.name ?? null, code: e.code ?? null, message: e.message ?? String(e), data: e.data ?? null };
}

// within rejects after WAIT_MS unless promise settles first.
function within(promise, what) {
  let timer;
  const gaveUp = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${WAIT_MS} ms`)), WAIT_MS);
  });
  return Promise.race([promise, gaveUp]).finally(() => clearTimeout(timer));
}

// run drives the scenario through adapter, which has:
//   connect(scenario, hooks) → {client}: hooks.onElicit(params) → answer,
//     hooks.onSample(params) → answer, hooks.onListChanged();
//   protocolVersion(), server(), list(), listen(),
//   call(params, {onprogress, signal}) → CallToolResult, close().
export async function run(adapter) {
  const watchdog = setTimeout(() => {
    console.error("mcpdriver: gave up after 90 s");
    process.exit(3);
  }, 90_000);
  const raw = process.argv[2] ?? (await readAll(process.stdin));
  const scenario = JSON.parse(raw);
  const nextLine = stdinLines();
  const out = { protocol_version: null, server: null, steps: [], elicitations: [], samplings: [], list_changed: 0 };

  let changed = [];
  const hooks = {
    onElicit(params) {
      out.elicitations.push(params);
      const answers = scenario.elicit ?? [];
      if (answers.length === 0) return { action: "cancel" };
      return answers[Math.min(out.elicitations.length, answers.length) - 1];
    },
    onSample(params) {
      out.samplings.push(params);
      return scenario.sample;
    },
    onListChanged() {
      out.list_changed++;
      const waiters = changed;
      changed = [];
      waiters.forEach((resolve) => resolve());
    },
  };

  try {
    await adapter.connect(scenario, hooks);
    out.protocol_version = adapter.protocolVersion() ?? null;
    out.server = adapter.server() ?? null;
    for (const step of scenario.steps) {
      out.steps.push(await runStep(adapter, step, out, nextLine, () => new Promise((resolve) => changed.push(resolve))));
    }
    await adapter.close();
  } catch (e) {
    out.fatal = describe(e);
  }
  process.stdout.write(JSON.stringify(out) + "\n");
  clearTimeout(watchdog);
  // The transports may hold sockets or a child open; the result is out.
  process.exit(0);
}

let listenedAt = 0; // list_changed as the last listen step left it

async function runStep(adapter, step, out, nextLine, nextChange) {
  switch (step.op) {
    case "list": {
      try {
        return { tools: (await within(adapter.list(), "tools/list")).tools };
      } catch (e) {
        return { error: describe(e) };
      }
    }
    case "listen":
      await within(adapter.listen(), "listen");
      listenedAt = out.list_changed;
      return { listening: true };
    case "mark":
      mark(step.name);
      return { marked: step.name };
    case "wait":
      await nextLine();
      return { waited: true };
    case "await_list_changed": {
      // A notification since the listen step counts: the test may have
      // saved the deployment before this step began. One that came for
      // another change is followed by the next.
      const deadline = Date.now() + WAIT_MS;
      for (let seen = listenedAt; ; ) {
        if (out.list_changed === seen) {
          try {
            await within(nextChange(), "notifications/tools/list_changed");
          } catch (e) {
            return { changed: false, error: describe(e) };
          }
        }
        seen = out.list_changed;
        const tools = (await within(adapter.list(), "tools/list")).tools;
        if (!step.tool || tools.some((t) => t.name === step.tool) || Date.now() > deadline) {
          return { changed: true, tools };
        }
      }
    }
    case "call":
      return call(adapter, step, out, nextLine);
    case "resources":
      try {
        const resources = (await within(adapter.resources(), "resources/list")).resources;
        const templates = (await within(adapter.templates(), "resources/templates/list")).resourceTemplates;
        return { resources, resource_templates: templates };
      } catch (e) {
        return { error: describe(e) };
      }
    case "end_session":
      // The client ends its session (a 2025-era DELETE), where the
      // adapter can; close alone leaves it to the server's idle timeout.
      if (!adapter.endSession) throw new Error("this client cannot end its session");
      try {
        await within(adapter.endSession(), "end the session");
        return { ended: true };
      } catch (e) {
        return { error: describe(e) };
      }
    case "read":
      try {
        return { contents: (await within(adapter.read({ uri: step.name }), "resources/read")).contents };
      } catch (e) {
        return { error: describe(e) };
      }
    default:
      throw new Error(`unknown step op ${JSON.stringify(step.op)}`);
  }
}

async function call(adapter, step, out, nextLine) {
  const args = { ...(step.arguments ?? {}) };
  if (step.run_id_from !== undefined) {
    const from = out.steps[step.run_id_from];
    args.run_id = from?.result?.structuredContent?.run_id ?? null;
  }
  const progress = [];
  const controller = new AbortController();
  const options = { signal: controller.signal, timeout: WAIT_MS * 3 };
  if (step.progress) {
    options.onprogress = (p) => progress.push({ progress: p.progress, total: p.total ?? null, message: p.message ?? null });
  }
  const entry = { name: step.name, result: null, error: null, progress, progress_at_result: null, aborted: false };
  const pending = adapter.call({ name: step.name, arguments: args }, options);
  if (step.abort === "stdin") {
    mark("in_flight");
    nextLine().then(() => {
      entry.aborted = true;
      controller.abort("the test aborted the call");
    });
  }
  try {
    entry.result = await pending;
  } catch (e) {
    entry.error = describe(e);
  }
  entry.progress_at_result = progress.length;
  return entry;
}
