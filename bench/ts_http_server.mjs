// The official TypeScript MCP SDK's Streamable HTTP server (the
// `@modelcontextprotocol/sdk` pinned in scripts/bench) serving one tool,
// `add {a, b}`, for the HTTP scale benchmark of bench-driver. Stateful, as
// the SDK's own examples: one McpServer and one StreamableHTTPServerTransport
// per session, kept in a map by Mcp-Session-Id; served by plain node:http
// (no express) with keep-alive. Listens on 127.0.0.1:0 and prints
// `listening on http://127.0.0.1:PORT/mcp` on stderr.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import * as z from 'zod/v4';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

const transports = new Map();

function newServer() {
  const server = new McpServer({ name: 'calc', version: '1.0.0' });
  server.registerTool(
    'add',
    { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  return server;
}

function fail(res, status, message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

const httpServer = http.createServer(async (req, res) => {
  try {
    const sid = req.headers['mcp-session-id'];
    let body;
    if (req.method === 'POST') {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    }
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport) {
      if (sid || req.method !== 'POST' || !isInitializeRequest(body)) {
        return fail(res, sid ? 404 : 400, sid ? 'Session not found' : 'No session');
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
      };
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  } catch (e) {
    if (!res.headersSent) fail(res, 500, String(e));
  }
});
httpServer.keepAliveTimeout = 120_000;
httpServer.listen(0, '127.0.0.1', () => {
  console.error(`listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
});
