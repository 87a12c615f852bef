// The official TypeScript SDK's OAuth client (@modelcontextprotocol/sdk, installed by
// scripts/install-mcp-peers into $PEERS_DIR/ts-sdk) against OUR protected server, for
// tests/it/oauth_ts_client.rs, with the SDK's demo authorization server
// (examples/server/demoInMemoryOAuthProvider.js: dynamic registration, an authorization
// endpoint that approves at once, opaque tokens, an introspection endpoint) on AS_PORT.
//
// Usage: TS_SDK_DIR=$PEERS_DIR/ts-sdk node ts_oauth_client.mjs MCP_URL AS_PORT
//
// The flow, as an application runs it: connect (401: the SDK reads our metadata, finds the
// authorization server, registers, and "redirects" the user), follow the authorization URL
// to its redirect (the code), finishAuth, connect again; call `whoami`; call `delete_file`,
// whose scope the token lacks (403 insufficient_scope: the SDK asks for more scope, another
// redirect), finish that authorization too and call again. The script only drives and
// records: one JSON report as the last line of stdout; diagnostics on stderr.
import { createRequire } from "node:module";
import path from "node:path";

const sdkDir = process.env.TS_SDK_DIR;
const [mcpUrl, asPort] = process.argv.slice(2);
if (!sdkDir || !mcpUrl || !asPort) {
  console.error("usage: TS_SDK_DIR=... node ts_oauth_client.mjs MCP_URL AS_PORT");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { UnauthorizedError } = require("@modelcontextprotocol/sdk/client/auth.js");
const { setupAuthServer } = require("@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js");

const REDIRECT = "http://127.0.0.1:1/callback"; // never fetched: the code is read off the redirect
const report = { redirects: [] };

// The demo authorization server, in this process (its log lines go to stderr).
const log = console.log;
console.log = (...args) => console.error(...args);
setupAuthServer({
  authServerUrl: new URL(`http://127.0.0.1:${asPort}`),
  mcpServerUrl: new URL(mcpUrl),
  strictResource: true,
});
// Until it listens (its metadata answers), for at most 10 s.
for (let tries = 0; ; tries++) {
  if (tries >= 200) throw new Error(`the demo authorization server does not answer on ${asPort}`);
  try {
    const r = await fetch(`http://127.0.0.1:${asPort}/.well-known/oauth-authorization-server`);
    if (r.ok) break;
  } catch {}
  await new Promise((r) => setTimeout(r, 50));
}

class Provider {
  constructor() {
    this.pending = null;
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: "ts-oauth-interop",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_post",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url) {
    report.redirects.push({ scope: url.searchParams.get("scope"), resource: url.searchParams.get("resource") });
    this.pending = url;
  }
  saveCodeVerifier(v) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

// The user "logs in": the authorization URL answers with a redirect carrying the code.
async function approve(provider) {
  const url = provider.pending;
  provider.pending = null;
  if (!url) throw new Error("no authorization was asked for");
  const response = await fetch(url, { redirect: "manual" });
  const location = response.headers.get("location");
  if (!location) throw new Error(`the authorization endpoint answered ${response.status}`);
  const code = new URL(location).searchParams.get("code");
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}

const text = (result) => result.content.map((c) => c.text).join("");
const provider = new Provider();
try {
  let transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  let client = new Client({ name: "ts-oauth-interop", version: "1" });
  try {
    await client.connect(transport);
    report.connectedWithoutAuth = true;
  } catch (e) {
    report.firstConnect = e instanceof UnauthorizedError ? "unauthorized" : String(e);
    await transport.finishAuth(await approve(provider));
    transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
    client = new Client({ name: "ts-oauth-interop", version: "1" });
    await client.connect(transport);
  }
  report.clientId = provider.client?.client_id;
  report.tokenScope = provider.saved?.scope;
  report.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  report.whoami = JSON.parse(text(await client.callTool({ name: "whoami", arguments: {} })));
  try {
    report.deleteFirst = text(await client.callTool({ name: "delete_file", arguments: {} }));
  } catch (e) {
    report.deleteFirst = e instanceof UnauthorizedError ? "unauthorized" : String(e);
    await transport.finishAuth(await approve(provider));
    report.stepUpScope = provider.saved?.scope;
    report.deleteAfterStepUp = text(await client.callTool({ name: "delete_file", arguments: {} }));
  }
  await client.close();
} catch (e) {
  report.failure = String(e?.stack ?? e);
}
log(JSON.stringify(report));
process.exit(0);
