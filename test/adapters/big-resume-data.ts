/**
 * The big sessions of big-resume.test.ts, built the same way in the writing
 * test and in the reading child process: turns of a coding agent with a
 * ~350 KB tool output each and, every ninth turn, a 1 MiB screenshot out of
 * five (repeated). 200 turns make ~100 MB (the issue's size; set
 * SESSIOND_BIG_RESUME_TURNS=200 by hand), CI runs fewer.
 */
import { createHash } from "node:crypto";
import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import type { AgentInputItem } from "@openai/agents-core";

export const TURNS = Number(process.env.SESSIOND_BIG_RESUME_TURNS ?? 20);

/** JSON with sorted keys: items that are deep-equal hash the same. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

export function digest(v: unknown): string {
  return createHash("sha256").update(canonical(v)).digest("hex");
}

function screenshot(n: number): string {
  const data = Buffer.alloc(1024 * 1024);
  let x = n * 2654435761;
  for (let i = 0; i < data.length; i += 4) {
    x = (x * 1103515245 + 12345) >>> 0;
    data.writeUInt32LE(x, i);
  }
  return data.toString("base64");
}

function output(t: number): string {
  return Array.from(
    { length: 10_000 },
    (_, k) => `turn ${t} line ${k}: ${(t * 7919 + k * 104729).toString(36)} ok`,
  ).join("\n");
}

/** The OpenAI Agents items of turn `t` (a user prompt, a tool call and result, an answer). */
export function openaiTurn(t: number): AgentInputItem[] {
  const content: Record<string, unknown>[] = [{ type: "input_text", text: `step ${t}` }];
  if (t % 9 === 0) {
    content.push({ type: "input_image", image: `data:image/png;base64,${screenshot(t % 5)}` });
  }
  return [
    { type: "message", role: "user", content },
    {
      type: "function_call",
      callId: `c${t}`,
      name: "run_tests",
      arguments: "{}",
      status: "completed",
    },
    {
      type: "function_call_result",
      callId: `c${t}`,
      name: "run_tests",
      status: "completed",
      output: { type: "text", text: output(t) },
    },
    {
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: `step ${t} passed` }],
    },
  ] as unknown as AgentInputItem[];
}

/** The Claude Code transcript lines of turn `t`, chained by parentUuid from `parent`. */
export function claudeTurn(
  sessionId: string,
  t: number,
  parent: string | null,
): SessionStoreEntry[] {
  const at = (k: number) =>
    `00000000-0000-4000-8000-${(t * 4 + k + 1).toString(16).padStart(12, "0")}`;
  const base = (k: number, p: string | null) => ({
    uuid: at(k),
    parentUuid: p,
    sessionId,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, t * 4 + k)).toISOString(),
    cwd: "/work/proj",
    isSidechain: false,
    userType: "external",
    version: "2.1.0",
  });
  const prompt: Record<string, unknown>[] = [{ type: "text", text: `step ${t}` }];
  if (t % 9 === 0) {
    prompt.push({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: screenshot(t % 5) },
    });
  }
  const out = output(t);
  return [
    { ...base(0, parent), type: "user", message: { role: "user", content: prompt } },
    {
      ...base(1, at(0)),
      type: "assistant",
      message: {
        id: `msg_${t}`,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [
          { type: "tool_use", id: `toolu_${t}`, name: "Bash", input: { command: "npm test" } },
        ],
        stop_reason: "tool_use",
        usage: { input_tokens: 10, output_tokens: 5 },
      },
    },
    {
      ...base(2, at(1)),
      type: "user",
      message: {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: `toolu_${t}`, content: out, is_error: false },
        ],
      },
      toolUseResult: { stdout: out, stderr: "", interrupted: false },
    },
    {
      ...base(3, at(2)),
      type: "assistant",
      message: {
        id: `msg_${t}b`,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [{ type: "text", text: `step ${t} passed` }],
        stop_reason: "end_turn",
        usage: { input_tokens: 10, output_tokens: 5 },
      },
    },
  ] as unknown as SessionStoreEntry[];
}

/** The uuid of the last line of turn `t`. */
export function lastOfTurn(t: number): string {
  return `00000000-0000-4000-8000-${(t * 4 + 4).toString(16).padStart(12, "0")}`;
}
