// CommonJS caller of the INSTALLED sessiond package: require() of every
// subpath loads the CommonJS build (run.sh also runs this with
// --no-experimental-require-module, as Node 20 before 20.19 behaves), then
// create, append, getState, fork and watch against SESSIOND_URL, and the
// embedded store.
const assert = require("node:assert/strict");
const { mkdtempSync } = require("node:fs");
const { tmpdir } = require("node:os");
const { join, sep } = require("node:path");
const { aeadImplementation, openStore, Role, View } = require("sessiond");
const { createSessiondClient, watchEntriesResumable } = require("sessiond/client");
const { PostgresEngine } = require("sessiond/postgres");
const { SessionService } = require("sessiond/proto");
const { serverConfig, startServer } = require("sessiond/server");
const web = require("sessiond/web");

for (const subpath of ["sessiond", "sessiond/client", "sessiond/proto", "sessiond/server"]) {
  const file = require.resolve(subpath);
  assert.ok(file.includes(`${sep}dist${sep}cjs${sep}`), `${subpath} resolved to ${file}`);
}
assert.equal(SessionService.typeName, "sessiond.v1.SessionService");
assert.equal(typeof PostgresEngine.open, "function");
assert.equal(typeof startServer, "function");
assert.equal(
  typeof web.createSessiondClient({ baseUrl: "https://127.0.0.1:1" }).store.listSessions,
  "function",
);
assert.equal(web.roleName(Role.TOOL), "tool");
assert.equal(serverConfig().port, 50051);

const text = (value) => [{ part: { case: "text", value } }];
const message = (id, role, value) => ({
  id,
  kind: { case: "message", value: { role, content: text(value) } },
});

async function main() {
  const url = process.env.SESSIOND_URL;
  assert.ok(url, "SESSIOND_URL is not set");
  const client = createSessiondClient({ baseUrl: url, protocol: "grpc" });
  const { session } = await client.store.createSession({ title: "cjs" });
  const { headSeq } = await client.session.append({
    session: session.id,
    entries: [message("u1", Role.USER, "37*19=?"), message("a1", Role.ASSISTANT, "703")],
  });
  assert.equal(headSeq, 3n);
  const { state } = await client.session.getState({ session: session.id, view: View.CONTEXT });
  assert.equal(state.messages.length, 2);
  const fork = await client.store.forkSession({ session: session.id, entry: "u1" });
  assert.notEqual(fork.session.id, session.id);
  const seqs = [];
  for await (const ev of watchEntriesResumable(client, { session: session.id, afterSeq: 0 })) {
    if (ev.event.case !== "entry") continue;
    seqs.push(Number(ev.event.value.seq));
    if (ev.event.value.seq === headSeq) break;
  }
  assert.deepEqual(seqs, [1, 2, 3]);

  const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), "sessiond-cjs-")) });
  assert.equal(await aeadImplementation, process.env.SESSIOND_EXPECT_AEAD);
  const { session: meta } = await store.create({ title: "embedded cjs" });
  const s = await store.open("default", meta.id);
  await s.append([message("u1", Role.USER, "hi")]);
  assert.equal((await s.state({ view: View.CONTEXT })).messages.length, 1);
  await store.close();
  console.log("cjs: ok (require of every subpath from dist/cjs, client, embedded store)");
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
