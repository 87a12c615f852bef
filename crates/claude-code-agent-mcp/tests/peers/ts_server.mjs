// A small MCP server on the official TypeScript SDK (@modelcontextprotocol/sdk,
// installed by scripts/install-mcp-peers into $PEERS_DIR/ts-sdk), for the
// client's interop tests (tests/it/interop_ts_server.rs).
//
// Usage: TS_SDK_DIR=$PEERS_DIR/ts-sdk node ts_server.mjs stdio
//        TS_SDK_DIR=$PEERS_DIR/ts-sdk node ts_server.mjs http PORT [--no-get] [--refuse-sessions]
//
// Tools: add(a, b); fail() (a tool error); slow(steps, ms) (a progress report
// per step, to the request's progress token); touch(delay_ms) (later, outside
// any request: a new tool, so tools/list_changed; counter://value changes, so
// resources/updated; and a log message). Resource counter://value; prompt
// greet(name). resources/subscribe and unsubscribe are answered.
//
// Over HTTP: one session (one transport and McpServer) per initialize, a
// 404 "Session not found" for an unknown session id (a session deleted or
// lost in a restart), as the spec says; --no-get answers the standalone
// GET stream with 405; --refuse-sessions answers every initialize with 503
// (a server that is full). The SDK sends what is tied to no request only
// on that GET stream.
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import http from "node:http";
import path from "node:path";

const sdkDir = process.env.TS_SDK_DIR;
if (!sdkDir) {
  console.error("ts_server.mjs: set TS_SDK_DIR to the directory holding node_modules/@modelcontextprotocol/sdk");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const types = require("@modelcontextprotocol/sdk/types.js");
const z = require("zod");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let counter = 0;
let added = 0;

function buildServer() {
  const server = new McpServer(
    { name: "ts-peer", version: "1.0.0" },
    {
      capabilities: { logging: {}, tools: { listChanged: true }, resources: { subscribe: true, listChanged: true } },
      instructions: "TypeScript interop peer.",
    },
  );
  const subscribed = new Set();

  server.registerTool(
    "add",
    { description: "Add two numbers", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  server.registerTool("fail", { description: "Always fails" }, async () => {
    throw new Error("this tool always fails");
  });
  server.registerTool(
    "slow",
    {
      description: "Reports progress each step, then answers",
      inputSchema: { steps: z.number().int(), ms: z.number().int() },
    },
    async ({ steps, ms }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        await sleep(ms);
        if (extra.signal.aborted) throw new Error("cancelled");
        if (token !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
          });
        }
      }
      return { content: [{ type: "text", text: `done after ${steps} steps` }] };
    },
  );
  server.registerTool(
    "touch",
    {
      description: "Later, outside any request: adds a tool, changes counter://value, logs",
      inputSchema: { delay_ms: z.number().int().optional() },
    },
    async ({ delay_ms }) => {
      setTimeout(async () => {
        counter += 1;
        added += 1;
        // Registering a tool on a connected server sends tools/list_changed.
        server.registerTool(`extra-${added}`, { description: "added by touch" }, async () => ({
          content: [{ type: "text", text: "extra" }],
        }));
        if (subscribed.has("counter://value")) {
          await server.server.sendResourceUpdated({ uri: "counter://value" });
        }
        await server.sendLoggingMessage({ level: "info", logger: "ts-peer", data: `touched ${counter}` });
      }, delay_ms ?? 100);
      return { content: [{ type: "text", text: "scheduled" }] };
    },
  );
  server.registerResource(
    "counter",
    "counter://value",
    { description: "A counter touch increments", mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: String(counter) }] }),
  );
  server.server.setRequestHandler(types.SubscribeRequestSchema, async (request) => {
    subscribed.add(request.params.uri);
    return {};
  });
  server.server.setRequestHandler(types.UnsubscribeRequestSchema, async (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });
  server.registerPrompt(
    "greet",
    { description: "Greet someone", argsSchema: { name: z.string() } },
    ({ name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Hello, ${name}!` } }] }),
  );
  return server;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function jsonError(res, status, code, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }));
}

async function serveHttp(port, noGet, refuseSessions) {
  const transports = new Map();
  const server = http.createServer(async (req, res) => {
    try {
      if (new URL(req.url, "http://localhost").pathname !== "/mcp") {
        res.writeHead(404).end();
        return;
      }
      if (req.method === "GET" && noGet) {
        res.writeHead(405, { allow: "POST, DELETE" }).end();
        return;
      }
      let body;
      if (req.method === "POST") {
        const text = await readBody(req);
        try {
          body = JSON.parse(text);
        } catch {
          jsonError(res, 400, -32700, "Parse error");
          return;
        }
      }
      const sid = req.headers["mcp-session-id"];
      if (sid !== undefined) {
        const transport = transports.get(sid);
        if (!transport) {
          jsonError(res, 404, -32001, "Session not found");
          return;
        }
        await transport.handleRequest(req, res, body);
        return;
      }
      if (req.method === "POST" && types.isInitializeRequest(body)) {
        if (refuseSessions) {
          jsonError(res, 503, -32000, "Server is full: no new sessions");
          return;
        }
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => transports.set(id, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) transports.delete(transport.sessionId);
        };
        await buildServer().connect(transport);
        await transport.handleRequest(req, res, body);
        return;
      }
      jsonError(res, 400, -32000, "Bad Request: No valid session ID provided");
    } catch (e) {
      console.error("ts_server.mjs:", e);
      if (!res.headersSent) jsonError(res, 500, -32603, String(e));
    }
  });
  server.listen(port, "127.0.0.1", () => console.error(`ts_server.mjs: listening on 127.0.0.1:${port}`));
}

const [mode, port, ...rest] = process.argv.slice(2);
if (mode === "http") {
  await serveHttp(Number(port), rest.includes("--no-get"), rest.includes("--refuse-sessions"));
} else if (mode === "stdio") {
  await buildServer().connect(new StdioServerTransport());
} else {
  console.error("usage: ts_server.mjs stdio | http PORT [--no-get] [--refuse-sessions]");
  process.exit(2);
}
