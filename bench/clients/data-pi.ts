/**
 * pi's SessionManager (@mariozechner/pi-coding-agent) on data in its own
 * format, in a fresh process (rows 6 and 9).
 *
 * {"op":"list", dir}: `SessionManager.list(cwd, dir)` over every session.
 * {"op":"append", dir, count, warmup, textBytes}: `appendMessage` of `count`
 *   messages one by one to a new session (pi writes with appendFileSync, no
 *   fsync; its file appears with the first assistant message), after
 *   `warmup` appends to another session.
 * {"op":"open", file, dir, warm, reopen}: cold `SessionManager.open` +
 *   `buildSessionContext()`; then warm: `buildSessionContext()` again on
 *   the open manager (pi keeps a session's entries in the manager and has no
 *   cache across managers), `warm` times; and `reopen` full re-opens
 *   (open + build in this now warm process) for the record.
 *
 * Prints {ms: number[], coldMs?, reopenMs?, totalMs?, importMs, count/messages}.
 */
import { BENCH_CWD } from "../lib/generate.js";
import { piMessage } from "../lib/pi-data.js";
import { appendConversation } from "./append-workload.js";
import { answer, args } from "./data-common.js";

const a = args<{
  op: "list" | "append" | "open";
  dir: string;
  file?: string;
  count?: number;
  warmup?: number;
  textBytes?: number;
  warm?: number;
  reopen?: number;
}>();

// The package's exports map only offers its index (which pulls in the whole
// agent), so the session manager module is imported by its file path.
const t0 = performance.now();
const { SessionManager } = (await import(
  new URL("core/session-manager.js", import.meta.resolve("@mariozechner/pi-coding-agent")).href
)) as typeof import("../../node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js");
const importMs = performance.now() - t0;

if (a.op === "list") {
  const t = performance.now();
  const sessions = await SessionManager.list(BENCH_CWD, a.dir);
  const coldMs = performance.now() - t;
  answer({ coldMs, ms: [coldMs], importMs, count: sessions.length });
}

if (a.op === "append") {
  const count = a.count ?? 1000;
  const warmup = a.warmup ?? 200;
  const c = appendConversation(count, a.textBytes);
  // biome-ignore lint/suspicious/noExplicitAny: pi's AgentMessage union is not worth importing here
  const inputs = c.entries.map((e, i) => piMessage(e, i + 2) as any);
  const w = SessionManager.create(BENCH_CWD, a.dir);
  for (let i = 0; i < warmup; i++) w.appendMessage(inputs[i % inputs.length]);
  const s = SessionManager.create(BENCH_CWD, a.dir);
  const ms: number[] = [];
  const start = performance.now();
  for (const input of inputs) {
    const t = performance.now();
    s.appendMessage(input);
    ms.push(performance.now() - t);
  }
  const totalMs = performance.now() - start;
  const reread = SessionManager.open(s.getSessionFile() as string, a.dir);
  answer({ ms, totalMs, importMs, messages: reread.buildSessionContext().messages.length });
}

if (a.op === "open") {
  const file = a.file as string;
  const c0 = performance.now();
  const sm = SessionManager.open(file, a.dir);
  const ctx = sm.buildSessionContext();
  const coldMs = performance.now() - c0;
  const ms: number[] = [];
  for (let i = 0; i < (a.warm ?? 0); i++) {
    const t = performance.now();
    sm.buildSessionContext();
    ms.push(performance.now() - t);
  }
  const reopenMs: number[] = [];
  for (let i = 0; i < (a.reopen ?? 0); i++) {
    const t = performance.now();
    SessionManager.open(file, a.dir).buildSessionContext();
    reopenMs.push(performance.now() - t);
  }
  answer({ coldMs, ms, reopenMs, importMs, messages: ctx.messages.length });
}
throw new Error(`unknown op ${a.op}`);
