// The official TypeScript SDK (@anthropic-ai/claude-agent-sdk) as a subject of
// scripts/bench.
//
// The same program as crates/devtools/src/bin/bench-sdk.rs: an
// in-process server `bench` with one tool `add` ({a, b, pad?, reply_bytes?}
// -> the text "sum=<a+b>" followed by reply_bytes x's), run through query()
// with the fake CLI as the CLI (FAKE_CLAUDE_PATH), which inherits
// FAKE_CLAUDE_SCENARIO / FAKE_CLAUDE_PARAMS, times every tools/call round trip
// and writes the report.
//
// With BENCH_SUBJECT_REPORT set, writes there when it called query() and when
// the first message arrived (ns since the Unix epoch), and the error that
// ended the query, if any.
//
// scripts/bench copies this file into the npm folder it installs
// (~/.cache/claude-agent-rs/bench/node) so that the bare imports resolve there.

import { readFileSync, writeFileSync } from "node:fs";
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

// Wall clock in ns since the Unix epoch, with sub-ms resolution.
const nowNs = () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));

const add = tool(
  "add",
  "Add two numbers",
  {
    a: z.number().describe("Left operand."),
    b: z.number().describe("Right operand."),
    pad: z.string().optional().describe("Padding, to make the arguments big; ignored."),
    reply_bytes: z.number().int().min(0).optional().describe("Bytes of x to append to the result, to make it big."),
  },
  // The same construction as the echo floor's and bench-sdk.rs's.
  async (args) => ({
    content: [{ type: "text", text: `sum=${args.a + args.b}` + "x".repeat(args.reply_bytes ?? 0) }],
  }),
);

function writeTiming(timing) {
  const path = process.env.BENCH_SUBJECT_REPORT;
  if (path) {
    writeFileSync(path, JSON.stringify(timing, (_, v) => (typeof v === "bigint" ? Number(v) : v)));
  }
}

async function main() {
  const cli = process.env.FAKE_CLAUDE_PATH;
  if (!cli) throw new Error("set FAKE_CLAUDE_PATH to the fake-claude binary");
  const server = createSdkMcpServer({ name: "bench", version: "1.0.0", tools: [add] });
  const timing = { query_ns: nowNs(), first_message_ns: 0, error: null };
  let failed = null;
  try {
    const q = query({
      prompt: "Run the benchmark.",
      options: {
        pathToClaudeCodeExecutable: cli,
        mcpServers: { bench: server },
        allowedTools: ["mcp__bench__add"],
      },
    });
    for await (const message of q) {
      if (!timing.first_message_ns) {
        timing.first_message_ns = nowNs();
        writeTiming(timing);
      }
      if (message.type === "result" && message.is_error) failed = String(message.result);
    }
  } catch (e) {
    failed = `${e?.name ?? "Error"}: ${e?.message ?? e}`;
  }
  timing.error = failed;
  writeTiming(timing);
  const hwm = readFileSync("/proc/self/status", "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmHWM:"));
  if (hwm) console.error(`ts_sdk: ${hwm.replace(/\s+/g, " ")}`);
  if (failed) {
    console.error(`ts_sdk: the benchmark failed: ${failed.slice(0, 2000)}`);
    process.exitCode = 1;
  }
}

await main();
