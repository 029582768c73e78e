/**
 * The same generated conversations in pi's own session format
 * (@mariozechner/pi-coding-agent, dist/core/session-manager.js, version 3):
 * a header line {"type":"session","version":3,"id","timestamp","cwd"}
 * followed by one JSON line per entry {type, id, parentId, timestamp, …},
 * the file named `<ISO time with - for : and .>_<session uuid>.jsonl` in the
 * session directory. pi writes a file only once it holds an assistant
 * message; every generated conversation does. pi has no rewind entry (its
 * `branch()` only moves the leaf in memory and a reload takes the last
 * entry as leaf), so only linear conversations are written here.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Conversation, type LogicalEntry, MODEL, PROVIDER, writeText } from "./generate.js";

/** A v7-shaped uuid (time-ordered, like pi's), deterministic per session. */
function uuidOf(c: Conversation, n: number): string {
  const ms = c.createdMs.toString(16).padStart(12, "0");
  const rest = n.toString(16).padStart(16, "0");
  return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7${rest.slice(0, 3)}-8${rest.slice(3, 6)}-${rest.slice(6, 16)}00`;
}

/** pi's message of a logical entry (AgentMessage: pi-ai's UserMessage / AssistantMessage). */
export function piMessage(e: LogicalEntry, seq: number): Record<string, unknown> {
  if (e.kind === "user") {
    return { role: "user", content: [{ type: "text", text: e.text }], timestamp: e.timeMs };
  }
  return {
    role: "assistant",
    content: [{ type: "text", text: e.text }],
    api: "anthropic-messages",
    provider: PROVIDER,
    model: MODEL,
    usage: {
      input: 12000 + seq,
      output: 350,
      cacheRead: 11000,
      cacheWrite: 0,
      totalTokens: 23350 + seq,
      cost: { input: 0.036, output: 0.00525, cacheRead: 0.0033, cacheWrite: 0, total: 0.04455 },
    },
    stopReason: "stop",
    timestamp: e.timeMs,
  };
}

/** The file's text: header + one line per entry, as pi's `_persist` writes it. */
export function piFileText(c: Conversation, n: number): { name: string; text: string } {
  const timestamp = new Date(c.createdMs).toISOString();
  const id = uuidOf(c, n);
  const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp, cwd: c.cwd })];
  let seq = 1;
  for (const e of c.entries) {
    seq++;
    if (e.kind === "leaf") throw new Error("pi-data writes linear conversations only");
    lines.push(
      JSON.stringify({
        type: "message",
        id: e.id,
        parentId: e.parentId ?? null,
        timestamp: new Date(e.timeMs).toISOString(),
        message: piMessage(e, seq),
      }),
    );
  }
  return { name: `${timestamp.replace(/[:.]/g, "-")}_${id}.jsonl`, text: `${lines.join("\n")}\n` };
}

/** Writes conversations into a pi session directory; returns the files and total size. */
export function writePiFiles(
  dir: string,
  cs: readonly Conversation[],
): { files: string[]; bytes: number } {
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  let bytes = 0;
  cs.forEach((c, i) => {
    const { name, text } = piFileText(c, i);
    const file = join(dir, name);
    writeText(file, text);
    files.push(file);
    bytes += Buffer.byteLength(text);
  });
  return { files, bytes };
}
