// The same package seen from a CommonJS TypeScript file: `require` types
// (dist/cjs/**/*.d.ts) resolve and check under strict.
import sessiond = require("sessiond");
import client = require("sessiond/client");

const store: sessiond.SessionStore = sessiond.openStore({ memory: true });
const make: typeof client.createSessiondClient = client.createSessiondClient;
const role: sessiond.Role = sessiond.Role.USER;

async function main(): Promise<void> {
  const { session } = await store.create({ title: "typed cjs" });
  const s = await store.open("default", session.id);
  await s.append({ id: "u1", kind: { case: "message", value: { role, content: [] } } });
  await store.close();
  if (typeof make !== "function") throw new Error("createSessiondClient");
  console.log("typed-require.cts: ok");
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
