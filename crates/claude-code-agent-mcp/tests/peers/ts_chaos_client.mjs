// A client on the official TypeScript MCP SDK (@modelcontextprotocol/sdk,
// installed by scripts/install-mcp-peers into $PEERS_DIR/ts-sdk) that loads
// replicas of OUR Streamable HTTP server behind HAProxy for
// tests/it/no_lost_calls.rs while the test kills and restarts them:
//
//   SESSIONS sessions each call `sum` (read-only, idempotent; MS ms of work)
//   one call after the other, from "ready" on its stdout until a line on its
//   stdin (or its end); then each makes one more call, and the script
//   reports.
//
// Usage: TS_SDK_DIR=$PEERS_DIR/ts-sdk node ts_chaos_client.mjs URL SESSIONS MS
//
// The script only drives and records: it prints one JSON report as the last
// line of stdout (calls made, those that failed and why, and each session's
// id and replica before and after, with the outcome of its last call), and the Rust
// test judges it. The SDK does not send a request again: a call whose
// answer is lost fails. Exit status 0 unless the script itself broke.
import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";

const sdkDir = process.env.TS_SDK_DIR;
if (!sdkDir) {
  console.error("ts_chaos_client.mjs: set TS_SDK_DIR to the directory holding node_modules/@modelcontextprotocol/sdk");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const [url, sessions, ms] = process.argv.slice(2);
if (!url || !sessions || !ms) {
  console.error("usage: ts_chaos_client.mjs URL SESSIONS MS");
  process.exit(2);
}

/** One `sum` call: null when it answered right, else why not. */
async function sum(client, a) {
  try {
    const result = await client.callTool(
      { name: "sum", arguments: { a, b: 1, ms: Number(ms) } },
      undefined,
      { timeout: 10_000 },
    );
    const text = result.content?.[0]?.text;
    return text === String(a + 1) ? null : `wrong answer: ${JSON.stringify(result)}`;
  } catch (e) {
    return String(e?.message ?? e);
  }
}

/** The replica serving the session. */
async function whoami(client) {
  const result = await client.callTool({ name: "whoami", arguments: {} }, undefined, { timeout: 10_000 });
  return result.content?.[0]?.text;
}

const opened = [];
for (let i = 0; i < Number(sessions); i++) {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: `ts-chaos-${i}`, version: "1.0.0" }, { capabilities: {} });
  // Errors of the GET stream's reconnections: not calls, only noted.
  const noted = [];
  client.onerror = (e) => noted.push(String(e?.message ?? e));
  await client.connect(transport);
  const home = await whoami(client);
  opened.push({ client, transport, before: transport.sessionId, home, noted });
}

let stop = false;
const lines = readline.createInterface({ input: process.stdin });
lines.on("line", () => { stop = true; });
lines.on("close", () => { stop = true; });

const report = { calls: 0, failed: 0, errors: {}, sessions: [] };
console.log("ready");
await Promise.all(opened.map(async ({ client }, who) => {
  let n = 0;
  while (!stop) {
    n += 1;
    report.calls += 1;
    const failed = await sum(client, who * 1_000_000 + n);
    if (failed !== null) {
      report.failed += 1;
      report.errors[failed] = (report.errors[failed] ?? 0) + 1;
    }
  }
}));
for (const { client, transport, before, home, noted } of opened) {
  const last = await sum(client, 7);
  const now = await whoami(client).catch((e) => String(e?.message ?? e));
  report.sessions.push({ before, after: transport.sessionId, home, now, last, stream_errors: noted.length });
  await client.close();
}
lines.close();
console.log(JSON.stringify(report));
process.exit(0);
