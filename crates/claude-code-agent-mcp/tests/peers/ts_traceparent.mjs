// A client on the official TypeScript SDK (@modelcontextprotocol/sdk 1.x,
// installed by scripts/install-mcp-peers into $PEERS_DIR/ts-sdk) that calls
// OUR server's tool `traced` over Streamable HTTP twice, for
// tests/it/trace_context.rs: once as the SDK sends it (it carries no trace
// context of its own: no SEP-414), once with a W3C `traceparent` and
// `tracestate` put into the call's `_meta` by hand, as a caller that
// propagates trace context itself would. Prints one JSON report (both
// results) as the last line of stdout; the Rust test judges it.
//
// Usage: TS_SDK_DIR=$PEERS_DIR/ts-sdk node ts_traceparent.mjs URL TRACEPARENT TRACESTATE
import { createRequire } from "node:module";
import path from "node:path";

const sdkDir = process.env.TS_SDK_DIR;
if (!sdkDir) {
  console.error("ts_traceparent.mjs: set TS_SDK_DIR to the directory holding node_modules/@modelcontextprotocol/sdk");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const [url, traceparent, tracestate] = process.argv.slice(2);
if (!url || !traceparent || !tracestate) {
  console.error("usage: ts_traceparent.mjs URL TRACEPARENT TRACESTATE");
  process.exit(2);
}
const TIMEOUT = { timeout: 10_000 };

const client = new Client({ name: "ts-traceparent", version: "1.0.0" }, { capabilities: {} });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const plain = await client.callTool({ name: "traced", arguments: {} }, undefined, TIMEOUT);
const traced = await client.callTool(
  { name: "traced", arguments: {}, _meta: { traceparent, tracestate } },
  undefined,
  TIMEOUT,
);
await client.close();
console.log(JSON.stringify({ plain, traced }));
