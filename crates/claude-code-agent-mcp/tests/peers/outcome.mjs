// What the TypeScript peer scripts (ts_client.mjs, ts2_client.mjs) share.

/** What a call came to: its result, or the error it threw. */
export async function outcome(promise) {
  try {
    return { result: await promise };
  } catch (e) {
    return { error: { code: e?.code ?? null, message: String(e?.message ?? e) } };
  }
}
