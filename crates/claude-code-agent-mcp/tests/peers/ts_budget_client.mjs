// A client on the official TypeScript MCP SDK (@modelcontextprotocol/sdk,
// installed by scripts/install-mcp-peers into $PEERS_DIR/ts-sdk) that drives
// OUR Streamable HTTP server for tests/it/budget_liveness.rs, on ONE session:
//
//   1. `echo`, then ROUNDS times: `big` answering SIZE characters, then
//      `echo` — every answer larger than the session's byte budget must come,
//      and the small calls after it too;
//   2. five calls of `slow`, each cancelled (AbortSignal) right after it was
//      sent, so the cancel races the request; then, after WAIT_MS, `running`
//      says how many `slow` handlers still run.
//
// Usage: TS_SDK_DIR=$PEERS_DIR/ts-sdk node ts_budget_client.mjs URL SIZE ROUNDS WAIT_MS
//
// The script only drives and records: it prints one JSON report (each step's
// outcome and time) as the last line of stdout, and the Rust test judges it.
// Exit status 0 unless the script itself broke.
import { createRequire } from "node:module";
import path from "node:path";

const sdkDir = process.env.TS_SDK_DIR;
if (!sdkDir) {
  console.error("ts_budget_client.mjs: set TS_SDK_DIR to the directory holding node_modules/@modelcontextprotocol/sdk");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const [url, size, rounds, waitMs] = process.argv.slice(2);
if (!url || !size || !rounds || !waitMs) {
  console.error("usage: ts_budget_client.mjs URL SIZE ROUNDS WAIT_MS");
  process.exit(2);
}

/** One call: its outcome, the length of its text, and how long it took. */
async function step(client, name, args, timeout) {
  const start = Date.now();
  try {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout });
    const text = result.content?.[0]?.text ?? "";
    return { tool: name, ok: !result.isError, chars: text.length, ms: Date.now() - start };
  } catch (e) {
    return { tool: name, ok: false, error: String(e?.message ?? e), ms: Date.now() - start };
  }
}

const client = new Client({ name: "ts-budget", version: "1.0.0" }, { capabilities: {} });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const report = { steps: [] };
report.steps.push(await step(client, "echo", { text: "first" }, 10_000));
for (let i = 0; i < Number(rounds); i++) {
  report.steps.push(await step(client, "big", { n: Number(size) }, 30_000));
  report.steps.push(await step(client, "echo", { text: `after ${i}` }, 10_000));
}

// Five slow calls, each aborted as soon as its request is on its way.
const cancelled = [];
for (let i = 0; i < 5; i++) {
  const abort = new AbortController();
  const call = client
    .callTool({ name: "slow", arguments: { ms: 6000 } }, undefined, { signal: abort.signal, timeout: 20_000 })
    .then(() => "answered", (e) => String(e?.message ?? e));
  abort.abort("changed my mind");
  cancelled.push(call);
}
report.cancelled = await Promise.all(cancelled);
await new Promise((resolve) => setTimeout(resolve, Number(waitMs)));
report.running = await step(client, "running", {}, 10_000);
report.running_text = (await client.callTool({ name: "running", arguments: {} })).content?.[0]?.text;
await client.close();
console.log(JSON.stringify(report));
