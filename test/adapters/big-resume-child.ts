/**
 * The reading half of big-resume.test.ts, in a process of its own (a new
 * process resuming a session, as after an agent restart). Args (JSON):
 * {url, kind: "openai" | "claude", sessionId, projectKey?}. Prints
 * {count, digest, ms} of what the adapter hands back.
 */
import { SessiondSessionStore } from "../../src/adapters/claude-agent-sdk/index.js";
import { SessiondSession } from "../../src/adapters/openai-agents/index.js";
import { createSessiondClient } from "../../src/client/index.js";
import { digest } from "./big-resume-data.js";

const a = JSON.parse(process.argv[2] ?? "{}") as {
  url: string;
  kind: "openai" | "claude";
  sessionId: string;
  projectKey?: string;
};
const client = createSessiondClient({ baseUrl: a.url, timeoutMs: 120_000 });
const t0 = performance.now();
let got: unknown[];
if (a.kind === "openai") {
  got = await new SessiondSession({ client, sessionId: a.sessionId }).getItems();
} else {
  const store = new SessiondSessionStore({ client });
  got = (await store.load({ projectKey: a.projectKey ?? "", sessionId: a.sessionId })) ?? [];
}
const ms = performance.now() - t0;
process.stdout.write(`${JSON.stringify({ count: got.length, digest: digest(got), ms })}\n`);
process.exit(0);
