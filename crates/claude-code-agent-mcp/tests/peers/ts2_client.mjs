// A small MCP client on the official TypeScript SDK's 2.x line
// (@modelcontextprotocol/client 2.4.0, installed by scripts/install-mcp-peers
// into $PEERS_DIR/ts-sdk2) that drives OUR server over Streamable HTTP, for
// tests/it/interop_ts2_client.rs.
//
// Usage: TS_SDK_DIR=$PEERS_DIR/ts-sdk2 node ts2_client.mjs URL MODE
//   MODE auto:   versionNegotiation 'auto' (server/discover first: 2026-07-28);
//                then a second client pinned to 2026-07-28 ({ pin }) connects
//   MODE legacy: the SDK's default, the 2025 initialize handshake
//
// The client declares elicitation and answers "Name?" with Ada and any other
// question with blue. It prints one JSON report (what each call returned or
// threw) as the last line of stdout; the Rust test judges it.
//
// The SDK has no Tasks runtime: a tools/call answered with
// `resultType: "task"` is an UnsupportedResultType error to it (its
// 2026-07-28 decodeResult accepts only complete and input_required, even
// through request() with a schema of one's own), and `tasks/*` are not in
// its typed request surface. The report records what a call that declares
// the extension gets. What it can do on 2026-07-28 is send tasks/get and
// tasks/cancel through request() with an explicit result schema (the names
// SEP-2663 re-defines pass its era gate that way): so two tasks are started
// with a plain fetch POST, and the SDK's client polls one to its result and
// cancels the other.
import { createRequire } from "node:module";
import path from "node:path";
import { outcome } from "./outcome.mjs";

const sdkDir = process.env.TS_SDK_DIR;
if (!sdkDir) {
  console.error("ts2_client.mjs: set TS_SDK_DIR to the directory holding node_modules/@modelcontextprotocol/client");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const { Client, StreamableHTTPClientTransport } = require("@modelcontextprotocol/client");
const z = require("zod");

const [url, mode] = process.argv.slice(2);
const negotiation = { auto: { mode: "auto" }, legacy: { mode: "legacy" } }[mode];
if (!url || !negotiation) {
  console.error("usage: ts2_client.mjs URL auto|legacy");
  process.exit(2);
}
const TIMEOUT = { timeout: 10_000 };
const TASKS = "io.modelcontextprotocol/tasks";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts `long` as a task with a bare POST (the SDK would reject the answer); its id. */
async function startTask(ms) {
  const params = {
    name: "long",
    arguments: { ms },
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } },
    },
  };
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "long",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params }),
  });
  const body = await response.text();
  const json = response.headers.get("content-type")?.startsWith("text/event-stream")
    ? body.split("\n").find((l) => l.startsWith("data: ") && l.length > 6).slice(6)
    : body;
  const created = JSON.parse(json).result;
  if (created?.resultType !== "task") throw new Error(`long did not start a task: ${json}`);
  return created.taskId;
}

/** Through the SDK: one task polled with tasks/get until it ends, another cancelled. */
async function followTasks(client) {
  // The extension declared per request (the client as a whole does not
  // declare it: its tools/call would be answered with tasks).
  const _meta = { "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, extensions: { [TASKS]: {} } } };
  const task = (method, taskId) =>
    outcome(client.request({ method, params: { taskId, _meta } }, z.object({}).passthrough(), TIMEOUT));
  // The one polled started last, so that it still works when first polled
  // (this runs beside the other calls, which take longer anyway).
  const cancelled = await startTask(10_000);
  const finishing = await startTask(800);
  const statuses = [];
  let got;
  const deadline = Date.now() + 5_000;
  do {
    got = await task("tasks/get", finishing);
    statuses.push(got.result?.status ?? got.error);
    if (got.result?.status !== "working") break;
    await sleep(50);
  } while (Date.now() < deadline);
  return {
    statuses,
    fetched: got,
    cancel: await task("tasks/cancel", cancelled),
    cancelled: await task("tasks/get", cancelled),
  };
}

async function main() {
  const client = new Client(
    { name: "ts2-client", version: "2.4.0" },
    { capabilities: { elicitation: {} }, versionNegotiation: negotiation },
  );
  // What the SDK reports out of band (a message it could not take, ...).
  const errors = [];
  client.onerror = (e) => errors.push(String(e?.message ?? e));
  const asked = [];
  client.setRequestHandler("elicitation/create", async (request) => {
    const message = request.params.message;
    asked.push(message);
    return { action: "accept", content: message === "Name?" ? { name: "Ada" } : { colour: "blue" } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const report = {
    version: client.getNegotiatedProtocolVersion(),
    server: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
    instructions: client.getInstructions(),
  };
  // Followed beside the calls below, awaited at the end.
  const following = report.version === "2026-07-28" ? outcome(followTasks(client)) : undefined;
  const call = (name, args = {}, options = {}) =>
    outcome(client.callTool({ name, arguments: args }, { ...TIMEOUT, ...options }));

  report.tools = (await client.listTools()).tools.map((t) => t.name);
  report.add = await call("add", { a: 2, b: 3 });

  const progress = [];
  report.slow = await call("slow", { steps: 4, ms: 20 }, { onprogress: (p) => progress.push(p.progress) });
  report.progress = progress;

  report.ask = await call("ask");
  report.asked = asked;

  // Cancelled after 300 ms: the server drops the handler.
  const abort = new AbortController();
  setTimeout(() => abort.abort("the user stopped it"), 300);
  report.hang = await call("hang", {}, { signal: abort.signal });
  const deadline = Date.now() + 5_000;
  do {
    report.hung = await call("hung");
    if (report.hung.result?.content?.[0]?.text === "dropped") break;
    await sleep(50);
  } while (Date.now() < deadline);

  // A tool that may run as a task, called plainly: an ordinary result.
  report.long_plain = await call("long", { ms: 10 });
  // The same, declaring the Tasks extension in the request's _meta (which
  // the SDK lets override its own envelope keys): our server answers with
  // a task, which the SDK does not take.
  if (report.version === "2026-07-28") {
    const capabilities = { elicitation: {}, extensions: { [TASKS]: {} } };
    report.long_task = await outcome(
      client.request(
        {
          method: "tools/call",
          params: {
            name: "long",
            arguments: { ms: 10 },
            _meta: { "io.modelcontextprotocol/clientCapabilities": capabilities },
          },
        },
        z.object({}).passthrough(),
        TIMEOUT,
      ),
    );
  }
  report.tasks = await following;
  report.ping = await outcome(client.ping(TIMEOUT));
  report.errors = errors;
  await client.close();

  if (mode === "auto") {
    const pinned = new Client({ name: "ts2-pinned", version: "2.4.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await pinned.connect(new StreamableHTTPClientTransport(new URL(url)));
    report.pinned = { version: pinned.getNegotiatedProtocolVersion(), add: await outcome(pinned.callTool({ name: "add", arguments: { a: 1, b: 1 } }, TIMEOUT)) };
    await pinned.close();
  }
  return report;
}

try {
  process.stdout.write(JSON.stringify(await main()) + "\n");
  process.exit(0);
} catch (e) {
  console.error("ts2_client.mjs:", e?.stack ?? e);
  process.exit(1);
}
