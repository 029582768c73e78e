// ESM caller of the INSTALLED sessiond package (plain node, no TypeScript
// loader): every subpath imports, and the client runs create, append,
// getState, fork and watch against the server at SESSIOND_URL; then the
// embedded store and an in-process server.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { aeadImplementation, EntrySchema, openStore, Role, View } from "sessiond";
import {
  assistantMessage,
  createSessiondClient,
  transcript,
  userMessage,
  watchEntriesResumable,
} from "sessiond/client";
import { PostgresEngine } from "sessiond/postgres";
import { SessionService, StoreService } from "sessiond/proto";
import { serverConfig, startServer } from "sessiond/server";
import * as web from "sessiond/web";

assert.equal(EntrySchema.typeName, "sessiond.v1.Entry");
// The native AES-GCM addon packed for this platform loads from the installed
// package (run.sh sets SESSIOND_EXPECT_AEAD to what the tarball holds).
assert.equal(await aeadImplementation, process.env.SESSIOND_EXPECT_AEAD);
assert.equal(SessionService.typeName, "sessiond.v1.SessionService");
assert.equal(StoreService.typeName, "sessiond.v1.StoreService");
assert.equal(typeof PostgresEngine.open, "function");
// sessiond/web: the browser client (fetch); its calls run in the repository's
// web-client test over HTTP/1.1 + TLS, here it must import and build.
const webClient = web.createSessiondClient({
  baseUrl: "https://127.0.0.1:1",
  protocol: "grpc-web",
});
assert.equal(typeof webClient.session.append, "function");
assert.equal(web.textOf(create(EntrySchema, web.userMessage("from the web"))), "from the web");

const text = (value) => [{ part: { case: "text", value } }];
const message = (id, role, value) => ({
  id,
  kind: { case: "message", value: { role, content: text(value) } },
});

/** create, append, getState, fork and watch through a client at `baseUrl`. */
async function exercise(baseUrl, protocol) {
  const client = createSessiondClient({ baseUrl, protocol });
  const { session } = await client.store.createSession({ title: `esm ${protocol}` });
  const id = session.id;
  const { headSeq } = await client.session.append({
    session: id,
    entries: [userMessage("37*19=?", { id: "u1" }), assistantMessage("703", { id: "a1" })],
  });
  assert.equal(headSeq, 3n); // the session_info entry is seq 1
  const { state } = await client.session.getState({ session: id, view: View.CONTEXT });
  assert.deepEqual(
    transcript(state).map((l) => `${l.entryId} ${l.role} ${l.text}`),
    ["u1 user 37*19=?", "a1 assistant 703"],
  );
  const fork = await client.store.forkSession({ session: id, entry: "u1" });
  assert.notEqual(fork.session.id, id);
  const seqs = [];
  for await (const ev of watchEntriesResumable(client, { session: id, afterSeq: 0 })) {
    if (ev.event.case !== "entry") continue;
    seqs.push(Number(ev.event.value.seq));
    if (ev.event.value.seq === headSeq) break;
  }
  assert.deepEqual(seqs, [1, 2, 3]);
  return id;
}

const url = process.env.SESSIOND_URL;
assert.ok(url, "SESSIOND_URL is not set");
await exercise(url, "grpc");
await exercise(url, "connect");

// The embedded store (JSONL files in a temp dir), with its own watch.
const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), "sessiond-esm-")) });
const { session: meta } = await store.create({ title: "embedded esm" });
const s = await store.open("default", meta.id);
await s.append([message("u1", Role.USER, "hi"), message("a1", Role.ASSISTANT, "hello")]);
const embedded = await s.state({ view: View.CONTEXT });
assert.equal(embedded.messages.length, 2);
const forked = await store.fork("default", meta.id, { entry: "u1" });
assert.notEqual(forked.id, meta.id);
const watched = [];
for await (const event of s.watch({ afterSeq: 0 })) {
  if (event.type !== "entry") continue;
  watched.push(event.entry.id);
  if (watched.length === 3) break;
}
assert.deepEqual(watched.slice(1), ["u1", "a1"]);
await store.close();

// sessiond/server: the server in-process, on a memory store and a free port.
const server = await startServer(
  openStore({ memory: true }),
  serverConfig({ port: 0, log: () => {} }),
);
try {
  await exercise(server.url, "grpc");
} finally {
  await server.close();
}
console.log(
  "esm: ok (client over grpc and connect, builders, embedded store, in-process server, sessiond/web imports)",
);
