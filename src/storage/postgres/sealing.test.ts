import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { assistant, user } from "../../../test/support/fixtures.js";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import { isSessiondError } from "../../core/errors.js";
import { textOf } from "../../core/message-text.js";
import { SessionStore } from "../../store/session-store.js";
import { LocalKeyring } from "../keys/local-keyring.js";
import { PostgresEngine } from "./postgres-engine.js";
import { SEALED_BATCH } from "./search.js";

/**
 * Encryption at rest on PostgreSQL (sealing.ts): a sealed workspace's
 * content is not in the database (pg_dump), reads and search open it, a
 * payload moved to another row does not open (DATA_LOSS naming the
 * entry), a missing or wrong key is FAILED_PRECONDITION, and erasure
 * destroys the wrapped key (the row and its old version).
 */

const run = promisify(execFile);
const WS = "vault";
const SECRETS = ["SEALME-PG-USER-11aa", "SEALME-PG-ASSISTANT-22bb"];
const CLEAR = "CLEARME-PG-OTHER-33cc";

async function dump(url: string): Promise<string> {
  return (await run("pg_dump", ["--data-only", url], { maxBuffer: 256 << 20 })).stdout;
}

async function failure(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => e as Error,
  );
}

if (pgSkip !== undefined) {
  it.skip(`PostgreSQL sealing tests (skipped: ${pgSkip})`, () => {});
} else {
  describe("sealed sessions on PostgreSQL", () => {
    let keyDir: string;
    let keys: LocalKeyring;
    const engines: PostgresEngine[] = [];
    let url: string;
    let admin: Awaited<ReturnType<typeof openPostgres>>["admin"];
    let store: SessionStore;

    const engine = async (
      encryption?: ConstructorParameters<typeof PostgresEngine>[0]["encryption"],
    ) => {
      const e = await PostgresEngine.open({ url, encryption });
      engines.push(e);
      return e;
    };

    beforeEach(async () => {
      keyDir = await mkdtemp(path.join(tmpdir(), "sessiond-pgkeys-"));
      keys = await LocalKeyring.open(path.join(keyDir, "keyring.json"), { create: true });
      const o = await openPostgres({ encryption: { keys, workspaces: [WS] } });
      engines.push(o.engine);
      url = o.url;
      admin = o.admin;
      store = new SessionStore(o.engine);
      await store.create({ workspace: WS, sessionId: "s1", title: "sealed", tags: { user: "42" } });
      await (await store.open(WS, "s1")).append([
        user("u1", `my key is ${SECRETS[0]}`),
        assistant("a1", `noted ${SECRETS[1]}`),
      ]);
      await store.create({ workspace: WS, sessionId: "s2" });
      await (await store.open(WS, "s2")).append([user("v1", "other sealed session")]);
      await store.create({ workspace: "open", sessionId: "c1" });
      await (await store.open("open", "c1")).append([user("w1", CLEAR)]);
    });

    afterEach(async () => {
      for (const e of engines.splice(0)) await e.close();
      await rm(keyDir, { recursive: true, force: true });
    });

    it("the content of a sealed workspace is not in pg_dump; the structure and other workspaces are", async () => {
      const text = await dump(url);
      for (const s of SECRETS) expect(text).not.toContain(s);
      expect(text).toContain(CLEAR);
      expect(text).toContain('"message":{"@sealed":"');
      // Structure in clear: ids, title and tags.
      expect(text).toContain("u1");
      expect(text).toContain("sealed");
      const [row] = await admin<{ wrapped: string | null; key_id: string }[]>`
        SELECT wrapped, key_id FROM sessiond_session_keys WHERE session_id = 's1'`;
      expect(row?.key_id).toBe(WS);
      expect(row?.wrapped?.length).toBeGreaterThan(20);
    });

    it("another engine with the keyring reads, redacts and searches the sealed content", async () => {
      const other = new SessionStore(await engine({ keys, workspaces: [WS] }));
      const s = await other.open(WS, "s1");
      const entries = (await s.entries(0, 10)).entries;
      expect(entries.map((e) => (e.kind.case === "message" ? textOf(e.kind.value) : ""))).toEqual([
        "",
        `my key is ${SECRETS[0]}`,
        `noted ${SECRETS[1]}`,
      ]);
      const hits = await other.search({ workspace: WS, query: SECRETS[0] as string });
      expect(hits.hits.map((h) => [h.sessionId, h.entryId])).toEqual([["s1", "u1"]]);
      // A redaction writes a sealed payload too; appends keep sealing.
      await s.redact(["a1"], { by: "ops", why: "test" });
      await s.append([user("u2", "SEALME-PG-LATER-44dd")]);
      const text = await dump(url);
      expect(text).not.toMatch(/SEALME/);
      const again = (await (await store.open(WS, "s1")).entries(0, 10)).entries;
      expect(again[2]?.withheld?.reason).toBe(WithheldReason.REDACTED);
      expect(again[3]?.id).toBe("u2");
    });

    it("a search of a workspace holding sealed and clear sessions finds both, in order, page by page", async () => {
      // A clear session of the workspace, from before its sealing was turned on.
      const before = new SessionStore(await engine({ keys, workspaces: [] }));
      await before.create({ workspace: WS, sessionId: "c-old" });
      await (await before.open(WS, "c-old")).append([user("o1", "COMMONWORD in clear")]);
      await new Promise((r) => setTimeout(r, 5));
      await store.create({ workspace: WS, sessionId: "s-new" });
      await (await store.open(WS, "s-new")).append([
        user("n1", "COMMONWORD sealed"),
        user("n2", "nothing here", { parentId: "n1" }),
        user("n3", "COMMONWORD again", { parentId: "n2" }),
      ]);
      const hits: string[] = [];
      let pageToken: string | undefined;
      for (let i = 0; i < 10; i++) {
        const page = await store.search({
          workspace: WS,
          query: "commonword",
          pageSize: 1,
          pageToken,
        });
        hits.push(...page.hits.map((h) => `${h.sessionId}/${h.entryId}`));
        pageToken = page.nextPageToken;
        if (!pageToken) break;
      }
      expect(hits).toEqual(["s-new/n1", "s-new/n3", "c-old/o1"]);
      const oldest = await store.search({ workspace: WS, query: "commonword", order: "oldest" });
      expect(oldest.hits.map((h) => h.entryId)).toEqual(["o1", "n1", "n3"]);
    });

    it("a search reads sealed messages in batches, keeps those holding the words, and pages as over clear ones", async () => {
      // The same sessions in a sealed and a clear workspace: more sealed
      // messages than one batch of the sealed scan, three holding the word,
      // more than a batch between two of them (oldest first). Every message
      // holds each trigram of the word ("zebra rafish"), so the search
      // tokens rule none out: all are read and opened, batch by batch.
      const clear = new SessionStore(await engine({ keys, workspaces: [WS] }));
      const per = Math.ceil((SEALED_BATCH + 500) / 2.5);
      for (const ws of [WS, "open"]) {
        for (let k = 0; k < 3; k++) {
          const entries = [];
          for (let i = 0; i < per; i++) {
            const word = (k === 0 && i === 0) || (k !== 1 && i === per - 3) ? " Zebrafish zq" : "";
            const at = i > 0 ? { parentId: `m${i - 1}` } : undefined;
            entries.push(user(`m${i}`, `message ${i} of ${k} zebra rafish${word}`, at));
          }
          await clear.create({ workspace: ws, sessionId: `big-${k}` });
          await (await clear.open(ws, `big-${k}`)).append(entries);
          await new Promise((r) => setTimeout(r, 3));
        }
      }
      const pages = async (
        ws: string,
        order: "newest" | "oldest",
        pageSize: number,
        query = "zebrafish",
      ) => {
        const out: string[][] = [];
        let pageToken: string | undefined;
        do {
          const page = await clear.search({
            workspace: ws,
            query,
            pageSize,
            order,
            pageToken,
          });
          out.push(page.hits.map((h) => `${h.sessionId}/${h.entryId}`));
          pageToken = page.nextPageToken;
        } while (pageToken);
        return out;
      };
      const last = `m${per - 3}`;
      const newest = [`big-2/${last}`, "big-0/m0", `big-0/${last}`];
      for (const [order, hits] of [
        ["newest", newest],
        ["oldest", ["big-0/m0", `big-0/${last}`, `big-2/${last}`]],
      ] as const) {
        expect((await pages(WS, order, 10)).flat()).toEqual(hits);
        const sealedPages = await pages(WS, order, 1);
        expect(sealedPages).toEqual(await pages("open", order, 1));
        expect(sealedPages.flat()).toEqual(hits);
        // A word too short for the search tokens: every sealed message is opened.
        expect((await pages(WS, order, 1, "zq")).flat()).toEqual(hits);
      }
    });

    it('a clear message whose metadata or tool arguments hold {"@sealed":"…"} is searched as clear', async () => {
      await store.create({ workspace: "open", sessionId: "odd" });
      const m = user("x1", "platypus in clear");
      const a = assistant("x2", "platypus again", ["call-1"], { parentId: "x1" });
      if (m.kind.case === "message") m.kind.value.metadata = { "@sealed": "abc" };
      if (a.kind.case === "message") {
        const call = a.kind.value.content.find((p) => p.part.case === "toolCall");
        if (call?.part.case === "toolCall") {
          call.part.value.arguments = fromJson(ValueSchema, { "@sealed": "q" });
        }
        a.kind.value.toolCallId = "";
      }
      await (await store.open("open", "odd")).append([m, a]);
      const found = await store.search({ workspace: "open", query: "platypus" });
      expect(found.hits.map((h) => h.entryId).sort()).toEqual(["x1", "x2"]);
    });

    it("a payload moved to another entry or session fails to open: DATA_LOSS naming workspace, session and entry", async () => {
      await admin`
        UPDATE sessiond_entries SET payload =
          (SELECT payload FROM sessiond_entries WHERE session_id = 's1' AND seq = 2)
        WHERE workspace = ${WS} AND session_id = 's2' AND seq = 2`;
      await admin`
        UPDATE sessiond_entries SET payload =
          (SELECT payload FROM sessiond_entries WHERE session_id = 's1' AND seq = 2)
        WHERE workspace = ${WS} AND session_id = 's1' AND seq = 3`;
      const fresh = new SessionStore(await engine({ keys, workspaces: [WS] }));
      for (const [id, seq] of [
        ["s2", 2],
        ["s1", 3],
      ] as const) {
        const err = await failure(fresh.open(WS, id).then((s) => s.entries(0, 10)));
        expect(isSessiondError(err, "DATA_LOSS")).toBe(true);
        expect(err.message).toContain(`session "${id}" in workspace "${WS}"`);
        expect(err.message).toContain(`entry "u1" (seq ${seq}) does not open`);
      }
    });

    it("without a keyring, with another keyring, or without its key row: FAILED_PRECONDITION saying which", async () => {
      const none = new SessionStore(await engine());
      const a = await failure(none.open(WS, "s1").then((s) => s.entries(0, 10)));
      expect(isSessiondError(a, "FAILED_PRECONDITION")).toBe(true);
      expect(a.message).toContain(
        'session "s1" in workspace "vault" is encrypted (entry "u1", seq 2)',
      );
      expect(a.message).toContain("no keyring is configured");

      const otherKeys = await LocalKeyring.open(path.join(keyDir, "other.json"), { create: true });
      await otherKeys.wrap(WS, new Uint8Array(32), { workspace: WS, session: "x" });
      const wrong = new SessionStore(await engine({ keys: otherKeys, workspaces: [WS] }));
      const b = await failure(wrong.open(WS, "s1").then((s) => s.entries(0, 10)));
      expect(isSessiondError(b, "FAILED_PRECONDITION")).toBe(true);
      expect(b.message).toContain('key "vault"');

      await admin`DELETE FROM sessiond_session_keys WHERE session_id = 's2'`;
      const lost = new SessionStore(await engine({ keys, workspaces: [WS] }));
      const c = await failure(lost.open(WS, "s2").then((s) => s.entries(0, 10)));
      expect(isSessiondError(c, "FAILED_PRECONDITION")).toBe(true);
      expect(c.message).toContain("its data key is missing");
      // The clear workspace reads without any keyring.
      const open = (await (await none.open("open", "c1")).entries(0, 10)).entries;
      expect(open[1]?.id).toBe("w1");
    });

    it("erasure destroys the wrapped key (the row and its old version): the content reads as erased everywhere, appends are refused", async () => {
      const [before] = await admin<{ wrapped: string }[]>`
        SELECT wrapped FROM sessiond_session_keys WHERE session_id = 's1'`;
      const b = new SessionStore(await engine({ keys, workspaces: [WS] }));
      expect((await (await b.open(WS, "s1")).entries(0, 10)).entries[1]?.withheld).toBeUndefined();

      const rec = await store.erase({ workspace: WS, tags: { user: "42" }, by: "dpo", why: "42" });

      expect([rec.sessionIds, rec.entries, rec.newlyErased]).toEqual([["s1"], 2, 2]);
      const [row] = await admin<Record<string, string | null>[]>`
        SELECT key_id, key_version, wrapped, erased FROM sessiond_session_keys WHERE session_id = 's1'`;
      expect([row?.key_id, row?.key_version, row?.wrapped]).toEqual([null, null, null]);
      expect(JSON.parse(row?.erased ?? "{}").by).toBe("dpo");
      // The old row version, with the wrapped key, is vacuumed out of the table's pages.
      await admin`CREATE EXTENSION IF NOT EXISTS pageinspect`;
      const [n] = await admin<{ n: string }[]>`
        SELECT pg_relation_size('sessiond_session_keys') / 8192 AS n`;
      const wrappedBytes = Buffer.from(before?.wrapped ?? "-");
      for (let blk = 0; blk < Number(n?.n); blk++) {
        const [p] = await admin<
          { p: Buffer }[]
        >`SELECT get_raw_page('sessiond_session_keys', ${blk}) AS p`;
        expect(p?.p.includes(wrappedBytes)).toBe(false);
      }
      // Another replica that had it cached, and a restart, read it erased.
      for (const reader of [b, new SessionStore(await engine({ keys, workspaces: [WS] }))]) {
        const entries = (await (await reader.open(WS, "s1")).entries(0, 10)).entries;
        expect(entries.slice(1).map((e) => [e.id, e.withheld?.reason, e.kind.case])).toEqual([
          ["u1", WithheldReason.ERASED, "message"],
          ["a1", WithheldReason.ERASED, "message"],
        ]);
      }
      expect((await b.search({ workspace: WS, query: SECRETS[0] as string })).hits).toEqual([]);
      // Neither replica keeps the unwrapped data key in memory.
      for (const e of engines) {
        const memo = (e as unknown as { ctx: { keys: { unwrapped: Map<string, unknown> } } }).ctx
          .keys.unwrapped;
        expect([...memo.keys()].filter((m) => m.startsWith(`${WS}\ns1\n`))).toEqual([]);
      }
      const refused = await failure((await b.open(WS, "s1")).append([user("u9", "more")]));
      expect(isSessiondError(refused, "FAILED_PRECONDITION")).toBe(true);
      expect(refused.message).toContain("was erased");
      // Idempotent.
      const again = await store.erase({ workspace: WS, sessionIds: ["s1"], by: "x" });
      expect([again.entries, again.newlyErased]).toEqual([2, 0]);
      // The other sealed session is untouched.
      const s2 = (await (await b.open(WS, "s2")).entries(0, 10)).entries;
      expect(s2[1]?.kind.case === "message" && textOf(s2[1].kind.value)).toBe(
        "other sealed session",
      );
    });
  });
}
