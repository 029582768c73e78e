/**
 * Runs in its own Node process (NODE_EXTRA_CA_CERTS must be set at start):
 * the browser client (sessiond/web) over the global fetch, which speaks
 * HTTP/1.1 only, as a browser does on a port that is not h2. Prints one JSON
 * line with what it saw. Usage: web-client-run.ts BASE_URL PROTOCOL JSON(0|1)
 */
import {
  assistantMessage,
  createSessiondClient,
  readState,
  toolResult,
  transcript,
  userMessage,
  View,
  type WebProtocol,
  watchEntriesResumable,
} from "../../../src/web/index.js";

const [baseUrl = "", protocol = "connect", json = "0"] = process.argv.slice(2);
const client = createSessiondClient({
  baseUrl,
  protocol: protocol as WebProtocol,
  useJson: json === "1",
  token: "t-web-0123456789abcdef",
  timeoutMs: 10_000,
});
const { session } = await client.store.createSession({ title: `web ${protocol}` });
const id = session?.id ?? "";
const appended = await client.session.append({
  session: id,
  entries: [
    userMessage("weather?"),
    assistantMessage("checking", {
      toolCalls: [{ id: "k1", name: "weather", args: { city: "Oslo" } }],
    }),
    toolResult("k1", "12°C"),
  ],
});
const { state } = await readState(client, { session: id, view: View.CONTEXT });
if (state === undefined) throw new Error("no state");
const seqs: string[] = [];
for await (const ev of watchEntriesResumable(client, { session: id, afterSeq: 1 })) {
  if (ev.event.case !== "entry") continue;
  seqs.push(String(ev.event.value.seq));
  if (ev.event.value.seq === appended.headSeq) break;
}
const fork = await client.store.forkSession({ session: id, entry: state.leafId });
console.log(
  JSON.stringify({
    id,
    headSeq: String(appended.headSeq),
    lines: transcript(state).map(
      (l) => `${l.role}:${l.text}:${l.toolCalls.map((c) => c.name).join()}`,
    ),
    ids: state.messages.map((m) => m.entryId),
    watched: seqs,
    forked: fork.session?.forkedFrom?.sessionId === id,
  }),
);
