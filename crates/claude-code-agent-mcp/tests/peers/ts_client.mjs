// A small MCP client on the official TypeScript SDK (@modelcontextprotocol/sdk,
// installed by scripts/install-mcp-peers into $PEERS_DIR/ts-sdk) that drives
// OUR server (tests/it/support/interop_server.rs) for tests/it/interop_ts_client.rs.
//
// Usage: TS_SDK_DIR=$PEERS_DIR/ts-sdk node ts_client.mjs stdio SERVER_COMMAND [ARGS...]
//        TS_SDK_DIR=$PEERS_DIR/ts-sdk node ts_client.mjs http URL
//
// Over stdio each client spawns the server with the SDK's StdioClientTransport;
// over HTTP each opens its own session with StreamableHTTPClientTransport.
// Two clients: "bare" declares no capabilities; "full" declares sampling and
// roots and answers them. The script only drives and records: it prints one
// JSON report (what every call returned or threw, what the client's handlers
// saw) as the last line of stdout, and the Rust test judges it. Diagnostics
// go to stderr. Exit status 0 unless the script itself broke.
import { createRequire } from "node:module";
import path from "node:path";
import { outcome } from "./outcome.mjs";

const sdkDir = process.env.TS_SDK_DIR;
if (!sdkDir) {
  console.error("ts_client.mjs: set TS_SDK_DIR to the directory holding node_modules/@modelcontextprotocol/sdk");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { CreateMessageRequestSchema, ListRootsRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

const [mode, ...rest] = process.argv.slice(2);
if (mode !== "stdio" && mode !== "http") {
  console.error("usage: ts_client.mjs stdio COMMAND [ARGS...] | http URL");
  process.exit(2);
}

// A request that gets no answer fails after this long (not the SDK's 60 s).
const TIMEOUT = { timeout: 10_000 };
// How long a held sampling request waits to be withdrawn.
const HOLD_MS = 8_000;

function transport() {
  if (mode === "stdio") {
    const [command, ...args] = rest;
    return new StdioClientTransport({ command, args, stderr: "inherit" });
  }
  return new StreamableHTTPClientTransport(new URL(rest[0]));
}

async function bare() {
  const client = new Client({ name: "ts-bare", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport());
  const report = {
    caps: await outcome(client.callTool({ name: "caps", arguments: {} }, undefined, TIMEOUT)),
    sample: await outcome(client.callTool({ name: "sample", arguments: { text: "hi" } }, undefined, TIMEOUT)),
  };
  await client.close();
  return report;
}

async function full() {
  const client = new Client(
    { name: "ts-full", version: "1.0.0" },
    { capabilities: { sampling: {}, roots: { listChanged: true } } },
  );
  // Sampling requests as the handler saw them; "hold" is kept until the
  // server withdraws it (its signal aborts) or HOLD_MS pass.
  const sampled = [];
  let arrived = () => {};
  client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
    const text = request.params.messages[0]?.content?.text;
    const seen = { text };
    sampled.push(seen);
    if (text !== "hold") {
      return { model: "ts-peer", role: "assistant", content: { type: "text", text: `echo ${text}` } };
    }
    arrived();
    seen.withdrawn = await new Promise((resolve) => {
      if (extra.signal.aborted) return resolve(true);
      const timer = setTimeout(() => resolve(false), HOLD_MS);
      extra.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    seen.reason = extra.signal.aborted ? String(extra.signal.reason ?? "") : null;
    throw new Error("held");
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [] }));
  await client.connect(transport());
  const call = (name, args = {}, options = {}) =>
    outcome(client.callTool({ name, arguments: args }, undefined, { ...TIMEOUT, ...options }));
  const report = {};

  report.tools = (await client.listTools()).tools.map((t) => t.name);
  report.caps = await call("caps");
  report.sample = await call("sample", { text: "hi" });

  // A call cancelled while its sampling request is outstanding.
  let holding = new Promise((resolve) => (arrived = resolve));
  const abort = new AbortController();
  const cancelled = call("sample", { text: "hold" }, { signal: abort.signal });
  await holding;
  abort.abort("the user stopped it");
  report.cancelled_call = await cancelled;
  // The same, but the tool times out (500 ms) while it waits.
  holding = new Promise((resolve) => (arrived = resolve));
  report.timed_out_call = await call("sample_briefly", { text: "hold" });
  // Wait for both held handlers to finish (withdrawn or not).
  const deadline = Date.now() + HOLD_MS + 2_000;
  while (sampled.filter((s) => s.text === "hold" && "withdrawn" in s).length < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  report.sampled = sampled;

  // Progress keeps `work` alive past its 300 ms timeout, up to its 2 s cap.
  const progress = [];
  const onprogress = (p) => progress.push(p.progress);
  let started = Date.now();
  report.work_long = await call("work", { steps: 12 }, { onprogress });
  report.work_long_ms = Date.now() - started;
  report.work_long_progress = progress;
  started = Date.now();
  report.work_forever = await call("work", { steps: 0 }, { onprogress: () => {} });
  report.work_forever_ms = Date.now() - started;

  // Every report of a call before its answer: 30 calls of 5 reports 10 ms
  // apart, the last one just before the answer. The SDK handles a response
  // at once but a notification a microtask later, so a report read in the
  // same chunk as the answer comes too late (the SDK logs an error).
  const errors = [];
  client.onerror = (e) => errors.push(String(e?.message ?? e));
  report.ticks = [];
  for (let i = 0; i < 30; i++) {
    const seen = [];
    const r = await call("work", { steps: 5, every_ms: 10 }, { onprogress: (p) => seen.push(p.progress) });
    report.ticks.push({ seen, answer: r.result?.content?.[0]?.text ?? r });
  }
  report.ticks_errors = errors;

  // A string cut in the middle of an emoji: JSON.stringify writes the lone
  // surrogate as "\ud83d", and the SDK's own servers accept it.
  report.cut_emoji = await call("echo", { text: "ab\u{1F600}".slice(0, 3) });

  // What handlers return (the SDK checks structuredContent against the schema).
  report.map = await call("map");
  report.map_structured = await call("map_structured");
  report.parts = await call("parts");
  report.big_image = await call("big_image");

  // Handlers that panic: -32603, and the server goes on.
  report.resource_boom = await outcome(client.readResource({ uri: "docs://boom" }, TIMEOUT));
  report.prompt_boom = await outcome(client.getPrompt({ name: "boom" }, TIMEOUT));
  report.complete_boom = await outcome(
    client.complete({ ref: { type: "ref/prompt", name: "boom" }, argument: { name: "x", value: "boom" } }, TIMEOUT),
  );
  report.resource_fine = await outcome(client.readResource({ uri: "docs://fine" }, TIMEOUT));
  report.ping = await outcome(client.ping(TIMEOUT));

  await client.close();
  return report;
}

try {
  const report = { bare: await bare(), full: await full() };
  process.stdout.write(JSON.stringify(report) + "\n");
  process.exit(0);
} catch (e) {
  console.error("ts_client.mjs:", e?.stack ?? e);
  process.exit(1);
}
