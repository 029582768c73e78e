/**
 * Scenario v: writes the viewer's big session through the embedded store
 * (seconds; appends over RPC would take minutes): `entries` entries, the
 * session's root included, of which `branches` side branches of
 * `branchLength` entries each fork off the main line at evenly spaced
 * points; the main line is appended last, so its tip is the current leaf.
 *
 * {dataDir, sessionId, entries, branches, branchLength}
 * Prints {leafId, entries}.
 */
import { userMessage } from "../../src/core/entry-builders.js";
import { openStore } from "../../src/index.js";
import { answer, args } from "./data-common.js";

const a = args<{
  dataDir: string;
  sessionId: string;
  entries: number;
  branches: number;
  branchLength: number;
}>();

const store = openStore({ dataDir: a.dataDir });
const session = await (async () => {
  await store.create({ sessionId: a.sessionId, title: "viewer bench" });
  return store.open(undefined, a.sessionId);
})();
const main = a.entries - 1 - a.branches * a.branchLength;
const forkEvery = Math.floor(main / (a.branches + 1));
type Init = ReturnType<typeof userMessage>;
let batch: Init[] = [];
let written = 1;
const put = async (e: Init) => {
  batch.push(e);
  written++;
  if (batch.length === 1000) {
    await session.append(batch);
    batch = [];
  }
};
let previous: string | undefined;
for (let i = 0; i < main; i++) {
  const id = `m${i}`;
  await put(
    userMessage(`message ${i} of the main line, as long as a short reply would be`, {
      id,
      ...(previous === undefined ? {} : { parentId: previous }),
    }),
  );
  previous = id;
  const branch = (i + 1) / forkEvery;
  if (Number.isInteger(branch) && branch <= a.branches) {
    let parent = id;
    for (let j = 0; j < a.branchLength; j++) {
      const bid = `b${branch}-${j}`;
      await put(userMessage(`message ${j} of branch ${branch}`, { id: bid, parentId: parent }));
      parent = bid;
    }
  }
}
if (batch.length > 0) await session.append(batch);
await store.close();
answer({ leafId: previous, entries: written });
