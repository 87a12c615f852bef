// A small MCP server on the official TypeScript SDK's 2.x line
// (@modelcontextprotocol/server 2.4.0, installed by scripts/install-mcp-peers
// into $PEERS_DIR/ts-sdk2), for our client's interop tests
// (tests/it/interop_ts2_server.rs).
//
// Usage: TS_SDK_DIR=$PEERS_DIR/ts-sdk2 node ts2_server.mjs PORT
// (GET /errors: what the SDK reported out of band, a JSON array.)
//
// One endpoint, http://127.0.0.1:PORT/mcp, serving both eras from one
// factory: 2026-07-28 requests (the per-request `_meta` envelope,
// server/discover) through the SDK's createMcpHandler, and 2025-era traffic
// (initialize) through a sessionful WebStandardStreamableHTTPServerTransport,
// routed with the SDK's isLegacyRequest, as its documentation shows.
//
// Tools: add(a, b); slow(steps, ms) (a progress report per step); ask() (an
// elicitation of a name, then of a colour: on 2026-07-28 two input_required
// rounds, the name carried to the second in requestState; on 2025-11-25 two
// elicitation/create requests); hang() (waits for its request to be
// cancelled, 10 s at most) and hung() (how the last hang is: none, running,
// aborted or finished); long(ms)
// (with the Tasks extension declared in the request's _meta, on 2026-07-28:
// run as a task, followed with tasks/get and tasks/cancel).
//
// The SDK has no Tasks runtime ("Task methods are 2025-11-25 wire vocabulary
// with no SDK runtime", its types say), but its 2026-07-28 result stamp
// passes a tools/call result's own resultType through, and its era gate
// lets a handler registered with an explicit schema answer tasks/get and
// tasks/cancel (the names SEP-2663 re-defines). So the extension is written
// here by hand, on a task table shared by every per-request instance.
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import http from "node:http";
import path from "node:path";
import { Readable } from "node:stream";

const sdkDir = process.env.TS_SDK_DIR;
if (!sdkDir) {
  console.error("ts2_server.mjs: set TS_SDK_DIR to the directory holding node_modules/@modelcontextprotocol/server");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const sdk = require("@modelcontextprotocol/server");
const { McpServer, createMcpHandler, isLegacyRequest, WebStandardStreamableHTTPServerTransport, inputRequired, acceptedContent } = sdk;
const z = require("zod");

const TASKS = "io.modelcontextprotocol/tasks";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (t) => ({ content: [{ type: "text", text: t }] });
const nameSchema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
const colourSchema = { type: "object", properties: { colour: { type: "string" } }, required: ["colour"] };

/** How the last `hang` is. */
let lastHang = "none";
/** The tasks, by id: { task, timer }. */
const tasks = new Map();

function now() {
  return new Date().toISOString();
}

function startTask(ms) {
  const at = now();
  const task = {
    taskId: randomUUID(),
    status: "working",
    createdAt: at,
    lastUpdatedAt: at,
    ttlMs: 60_000,
    pollIntervalMs: 50,
  };
  const timer = setTimeout(() => {
    Object.assign(task, { status: "completed", lastUpdatedAt: now(), result: text(`worked ${ms} ms`) });
  }, ms);
  tasks.set(task.taskId, { task, timer });
  return task;
}

function findTask(taskId) {
  const entry = tasks.get(taskId);
  if (!entry) throw new sdk.ProtocolError(-32602, `no task ${taskId}`);
  return entry;
}

function buildServer(ctx) {
  const modern = ctx?.era === "modern";
  const server = new McpServer(
    { name: "ts2-peer", version: "2.4.0" },
    {
      capabilities: { tools: {}, ...(modern && { extensions: { [TASKS]: {} } }) },
      instructions: "TypeScript 2.x interop peer.",
    },
  );
  server.registerTool(
    "add",
    { description: "Adds two numbers", inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => text(String(a + b)),
  );
  server.registerTool(
    "slow",
    {
      description: "Reports progress each step, then answers",
      inputSchema: z.object({ steps: z.number().int(), ms: z.number().int() }),
    },
    async ({ steps, ms }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        await sleep(ms);
        if (token !== undefined) {
          await ctx.mcpReq.notify({
            method: "notifications/progress",
            params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
          });
        }
      }
      return text(`done after ${steps} steps`);
    },
  );
  server.registerTool("ask", { description: "Asks for a name, then a colour" }, async (ctx) => {
    if (!modern) {
      const name = await ctx.mcpReq.elicitInput({ mode: "form", message: "Name?", requestedSchema: nameSchema });
      const colour = await ctx.mcpReq.elicitInput({ mode: "form", message: "Colour?", requestedSchema: colourSchema });
      return text(`${name.content?.name} likes ${colour.content?.colour}`);
    }
    const responses = ctx.mcpReq.inputResponses;
    const state = ctx.mcpReq.requestState();
    const name = acceptedContent(responses, "name")?.name ?? (state ? JSON.parse(state).name : undefined);
    if (name === undefined) {
      return inputRequired({
        inputRequests: { name: inputRequired.elicit({ message: "Name?", requestedSchema: nameSchema }) },
        requestState: JSON.stringify({ round: 1 }),
      });
    }
    const colour = acceptedContent(responses, "colour")?.colour;
    if (colour === undefined) {
      return inputRequired({
        inputRequests: { colour: inputRequired.elicit({ message: "Colour?", requestedSchema: colourSchema }) },
        requestState: JSON.stringify({ round: 2, name }),
      });
    }
    return text(`${name} likes ${colour}`);
  });
  server.registerTool("hang", { description: "Waits to be cancelled" }, async (ctx) => {
    const signal = ctx.mcpReq.signal;
    lastHang = "running";
    const aborted = await new Promise((resolve) => {
      if (signal.aborted) return resolve(true);
      const timer = setTimeout(() => resolve(false), 10_000);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    lastHang = aborted ? "aborted" : "finished";
    return text(aborted ? "cancelled" : "never cancelled");
  });
  server.registerTool("hung", { description: "What the last hang saw" }, async () => text(lastHang));
  server.registerTool(
    "long",
    { description: "Works ms milliseconds; a task when the caller lets it", inputSchema: z.object({ ms: z.number().int() }) },
    async ({ ms }, ctx) => {
      const declared = ctx.mcpReq.envelope?.["io.modelcontextprotocol/clientCapabilities"]?.extensions?.[TASKS];
      if (modern && declared !== undefined) {
        return { resultType: "task", ...startTask(ms) };
      }
      await sleep(ms);
      return text(`worked ${ms} ms`);
    },
  );
  if (modern) {
    const idParams = z.object({ taskId: z.string() }).passthrough();
    const anyResult = z.object({}).passthrough();
    server.server.setRequestHandler(
      "tasks/get",
      { params: idParams, result: anyResult },
      async ({ taskId }) => ({ ...findTask(taskId).task }),
    );
    server.server.setRequestHandler(
      "tasks/cancel",
      { params: idParams, result: anyResult },
      async ({ taskId }) => {
        const entry = findTask(taskId);
        if (entry.task.status === "working") {
          clearTimeout(entry.timer);
          Object.assign(entry.task, { status: "cancelled", statusMessage: "cancelled by the client", lastUpdatedAt: now() });
        }
        return {};
      },
    );
  }
  return server;
}

// What the SDK rejects or trips over, out of band (GET /errors lists it).
const errors = [];
const onerror = (e) => {
  errors.push(String(e?.message ?? e));
  console.error(`ts2_server.mjs: SDK error: ${e?.message ?? e}`);
};
const modernHandler = createMcpHandler(buildServer, { legacy: "reject", onerror });
const sessions = new Map();

async function legacy(request) {
  const sid = request.headers.get("mcp-session-id");
  if (sid) {
    const transport = sessions.get(sid);
    if (!transport) {
      return Response.json({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }, { status: 404 });
    }
    return transport.handleRequest(request);
  }
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => sessions.set(id, transport),
    onsessionclosed: (id) => sessions.delete(id),
  });
  transport.onerror = onerror;
  await buildServer({ era: "legacy" }).connect(transport);
  return transport.handleRequest(request);
}

/** node:http to the web-standard Request and back, streaming the body. */
async function serve(req, res) {
  const url = new URL(req.url, `http://${req.headers.host}`);
  if (url.pathname === "/errors") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(errors));
    return;
  }
  if (url.pathname !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  const hasBody = req.method !== "GET" && req.method !== "HEAD" && req.method !== "DELETE";
  const request = new Request(url, {
    method: req.method,
    headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
    body: hasBody ? Readable.toWeb(req) : undefined,
    duplex: hasBody ? "half" : undefined,
    signal: abort.signal,
  });
  const response = (await isLegacyRequest(request)) ? await legacy(request) : await modernHandler.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  // Now, not with the first chunk: a GET stream may stay silent a long while,
  // and its client waits for the headers.
  res.flushHeaders();
  if (!response.body) {
    res.end();
    return;
  }
  try {
    for await (const chunk of response.body) {
      res.write(chunk);
    }
  } catch {
    // The client went away.
  }
  res.end();
}

const port = Number(process.argv[2]);
http
  .createServer((req, res) =>
    serve(req, res).catch((e) => {
      console.error("ts2_server.mjs:", e);
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(e));
    }),
  )
  .listen(port, "127.0.0.1", () => console.error(`ts2_server.mjs: listening on 127.0.0.1:${port}`));
