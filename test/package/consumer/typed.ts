// A strict TypeScript caller of the INSTALLED sessiond package (ESM): the
// types come from the package's .d.ts files (run.sh type-checks it with the
// repository's tsc, then compiles it and runs it with plain node).
import { type EntryInput, openStore, Role, type SessionStore, View } from "sessiond";
import {
  assistantMessage,
  createSessiondClient,
  type EntryInit,
  type SessiondClient,
  textOf,
  toolResult,
  watchEntriesResumable,
} from "sessiond/client";
import { PostgresEngine, type PostgresEngineOptions } from "sessiond/postgres";
import { type GetStateResponse, SessionService } from "sessiond/proto";
import { type RunningServer, type ServerConfig, serverConfig, startServer } from "sessiond/server";
import {
  createSessiondClient as createWebClient,
  type SessiondWebClientOptions,
} from "sessiond/web";

const webOptions: SessiondWebClientOptions = {
  baseUrl: "https://127.0.0.1:1",
  protocol: "connect",
};
const webClient: SessiondClient = createWebClient(webOptions);
if (typeof webClient.store.createSession !== "function") fail("web client");
const result: EntryInit = toolResult("k1", "12°C", { toolName: "weather" });

function fail(what: string): never {
  throw new Error(`typed.ts: ${what}`);
}

const message = (id: string, role: Role, value: string): EntryInput => ({
  id,
  kind: { case: "message", value: { role, content: [{ part: { case: "text", value } }] } },
});

async function exercise(client: SessiondClient): Promise<void> {
  const { session } = await client.store.createSession({ title: "typed" });
  const id: string = session?.id ?? fail("no session");
  const { headSeq } = await client.session.append({
    session: id,
    entries: [message("u1", Role.USER, "37*19=?"), message("a1", Role.ASSISTANT, "703")],
  });
  const got: GetStateResponse = await client.session.getState({ session: id, view: View.CONTEXT });
  if (got.state?.messages.length !== 2) fail("state");
  const fork = await client.store.forkSession({ session: id, entry: "u1" });
  if (fork.session === undefined || fork.session.id === id) fail("fork");
  const seqs: bigint[] = [];
  for await (const ev of watchEntriesResumable(client, { session: id, afterSeq: 0n })) {
    if (ev.event.case !== "entry") continue;
    seqs.push(ev.event.value.seq);
    if (ev.event.value.seq === headSeq) break;
  }
  if (seqs.join(",") !== "1,2,3") fail(`watch saw ${seqs.join(",")}`);
}

const url = process.env.SESSIOND_URL ?? fail("SESSIOND_URL is not set");
await exercise(createSessiondClient({ baseUrl: url, protocol: "grpc" }));

const store: SessionStore = openStore({ memory: true });
const { session: meta } = await store.create({ title: "embedded typed" });
const s = await store.open("default", meta.id);
await s.append([message("u1", Role.USER, "hi")]);
if ((await s.state({ view: View.CONTEXT })).messages.length !== 1) fail("embedded state");
await s.append([assistantMessage("", { toolCalls: [{ id: "k1", name: "weather" }] }), result]);
const last = (await s.state({ view: View.HISTORY })).messages.at(-1);
if (textOf(last) !== "12°C") fail(`tool result text: ${textOf(last)}`);

const config: ServerConfig = serverConfig({ port: 0, log: () => {} });
const server: RunningServer = await startServer(store, config);
await exercise(createSessiondClient({ baseUrl: server.url, protocol: "connect" }));
await server.close();

const pgOptions: PostgresEngineOptions = { url: "postgres://localhost/sessiond" };
if (typeof PostgresEngine.open !== "function" || pgOptions.url === "") fail("postgres");
if (SessionService.typeName !== "sessiond.v1.SessionService") fail("proto");
console.log("typed.ts: ok (strict types from the package, client, embedded store, server)");
