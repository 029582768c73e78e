import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toJson } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { SessionMetaSchema } from "../../gen/sessiond/v1/session_pb.js";
import {
  assistantMessage,
  createSessiondClient,
  type SessiondClient,
  userMessage,
} from "../../src/client/index.js";
import { runCli as sessiond } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * `sessiond export` from one server and `sessiond import` into another give
 * the same session: every entry (ids, parents, seqs, timestamps, the root
 * with created_at and forked_from, Leaf entries) and the same metadata.
 */

let from: SessiondProcess;
let to: SessiondProcess;
let source: SessiondClient;
let target: SessiondClient;
const dir = mkdtempSync(join(tmpdir(), "sessiond-export-import-"));

beforeAll(async () => {
  [from, to] = await Promise.all([startSessiond(), startSessiond()]);
  source = createSessiondClient({ baseUrl: from.url });
  target = createSessiondClient({ baseUrl: to.url });
});

afterAll(async () => {
  await Promise.all([from?.stop(), to?.stop()]);
  await Promise.all([removeDataDir(from.dataDir), removeDataDir(to.dataDir)]);
  rmSync(dir, { recursive: true, force: true });
});

async function move(id: string): Promise<string> {
  const exported = await sessiond(["export", id, "--server", from.url]);
  expect(exported.code).toBe(0);
  const file = join(dir, `${id}.jsonl`);
  writeFileSync(file, exported.stdout);
  const imported = await sessiond(["import", file, "--server", to.url]);
  expect(imported.stderr).toBe("");
  return imported.stdout.trim();
}

/** Every entry of a session, page by page. */
async function log(c: SessiondClient, id: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (;;) {
    const page = await c.session.getEntries({ session: id, afterSeq: BigInt(out.length) });
    if (page.entries.length === 0) return out;
    out.push(...page.entries.map((e) => toJson(EntrySchema, e)));
  }
}

async function expectSame(id: string): Promise<void> {
  const entries = await log(target, id);
  expect(entries).toEqual(await log(source, id));
  const meta = async (c: SessiondClient) =>
    toJson(SessionMetaSchema, (await c.store.getSession({ session: id })).session as never);
  expect(await meta(target)).toEqual(await meta(source));
}

describe("export from one server, import into another", () => {
  it("a branched, compacted, labelled session that ends on a rewind, and its fork, arrive exactly", async () => {
    const { session } = await source.store.createSession({
      title: "travels",
      tags: { user: "ana" },
    });
    const id = session?.id as string;
    await source.session.append({
      session: id,
      entries: [
        { ...userMessage("q1"), id: "q1" },
        { ...assistantMessage("a1"), id: "a1" },
        {
          id: "c1",
          kind: { case: "compaction", value: { summary: "q1/a1", replacesEntryIds: ["q1", "a1"] } },
        },
        { ...userMessage("q2"), id: "q2" },
        { id: "l1", kind: { case: "label", value: { label: "before-branch" } } },
      ],
    });
    await source.session.rewind({ session: id, target: "c1" });
    await source.session.append({
      session: id,
      entries: [{ ...userMessage("q2 again"), id: "q3" }],
    });
    await source.session.rewind({ session: id, target: "before-branch" });
    const fork = (await source.store.forkSession({ session: id, entry: "q3", title: "the fork" }))
      .session;

    expect(await move(id)).toMatch(new RegExp(`^imported ${id} \\(\\d+ entries\\)$`));
    await expectSame(id);
    await move(fork?.id as string);
    await expectSame(fork?.id as string);
    const moved = (await target.store.getSession({ session: fork?.id as string })).session;
    expect(moved?.forkedFrom).toMatchObject({ sessionId: id, entryId: "q3" });
  });

  it("a subagent session arrives as a subagent of its (already moved) parent", async () => {
    const parent = (await source.store.createSession({ title: "parent" })).session?.id as string;
    const child = (
      await source.store.createSession({ parentSessionId: parent, agentType: "explore" })
    ).session?.id as string;
    await source.session.append({
      session: child,
      entries: [{ ...userMessage("look"), id: "u1" }],
    });
    await move(parent);
    await move(child);
    await expectSame(child);
    const listed = (await target.store.listSessions({ parentSessionId: parent })).sessions;
    expect(listed.map((s) => s.id)).toEqual([child]);
  });

  it("a session larger than an import part (1 MiB) moves in parts, its pointer move in the first", async () => {
    const id = (await source.store.createSession({ title: "big" })).session?.id as string;
    const batch = (from: number) =>
      Array.from({ length: 500 }, (_, k) => ({
        ...userMessage(`${from + k} ${"y".repeat(1000)}`),
        id: `b${from + k}`,
      }));
    await source.session.append({ session: id, entries: batch(0) });
    await source.session.rewind({ session: id, target: "b100" });
    await source.session.append({ session: id, entries: batch(500) });
    await source.session.append({ session: id, entries: batch(1000) });
    expect(await move(id)).toBe(`imported ${id} (1502 entries)`);
    await expectSame(id);
  });

  it("moving the same session again changes nothing and says so", async () => {
    const id = (await source.store.createSession({ title: "twice" })).session?.id as string;
    await move(id);
    expect(await move(id)).toMatch(/^unchanged, already imported: /);
    await expectSame(id);
  });
});
