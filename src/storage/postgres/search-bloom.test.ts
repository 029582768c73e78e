import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { info, user } from "../../../test/support/fixtures.js";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import { SessionStore } from "../../store/session-store.js";
import { LocalKeyring } from "../keys/local-keyring.js";
import { PostgresEngine } from "./postgres-engine.js";
import { FILTERED_SESSIONS } from "./search.js";

/**
 * The search filters of sealed messages (search-bloom.ts, migration 17):
 * written with every sealed message, keyed per session, and what the
 * search asks PostgreSQL for; rows without a filter are still searched.
 */

const WS = "vault";

if (pgSkip !== undefined) {
  it.skip(`PostgreSQL search filter tests (skipped: ${pgSkip})`, () => {});
} else {
  describe("search filters of sealed messages on PostgreSQL", () => {
    let keyDir: string;
    let engine: PostgresEngine;
    let admin: Awaited<ReturnType<typeof openPostgres>>["admin"];
    let store: SessionStore;
    let url: string;
    let keys: LocalKeyring;

    beforeEach(async () => {
      keyDir = await mkdtemp(path.join(tmpdir(), "sessiond-pgblooms-"));
      keys = await LocalKeyring.open(path.join(keyDir, "keyring.json"), { create: true });
      const o = await openPostgres({ encryption: { keys, workspaces: [WS] } });
      url = o.url;
      engine = o.engine;
      admin = o.admin;
      store = new SessionStore(engine);
    });

    afterEach(async () => {
      await engine.close();
      await rm(keyDir, { recursive: true, force: true });
    });

    /** Each row's kind and filter as a string of 2,048 "0" and "1" (null: none). */
    const bloomsOf = async (ws: string, id: string) =>
      (
        await admin<{ seq: number; kind: string; bloom: Buffer | null }[]>`
          SELECT seq, kind, search_bloom AS bloom FROM sessiond_entries
          WHERE workspace = ${ws} AND session_id = ${id} ORDER BY seq`
      ).map((r) => ({
        ...r,
        bloom:
          r.bloom === null
            ? null
            : [...r.bloom].map((b) => b.toString(2).padStart(8, "0")).join(""),
      }));
    const messageBloom = async (ws: string, id: string) =>
      (await bloomsOf(ws, id)).find((r) => r.kind === "message")?.bloom;
    const ones = (bits: string) => [...bits].filter((b) => b === "1").length;

    const hitsOf = async (ws: string, query: string, by = store) =>
      (await by.search({ workspace: ws, query })).hits.map((h) => `${h.sessionId}/${h.entryId}`);
    /** The hits of a replica that has not searched yet (nothing cached). */
    const freshHits = async (ws: string, query: string) => {
      const fresh = await PostgresEngine.open({ url, encryption: { keys, workspaces: [WS] } });
      try {
        return await hitsOf(ws, query, new SessionStore(fresh));
      } finally {
        await fresh.close();
      }
    };

    it("sealed messages carry a keyed filter (appended or imported); clear rows and other kinds none", async () => {
      const text = "the quokka sleeps";
      await store.create({ workspace: WS, sessionId: "a" });
      await (await store.open(WS, "a")).append([user("m1", text)]);
      await store.import(WS, [info("r"), user("m1", text, { parentId: "r" })], {
        sessionId: "b",
      });
      await store.create({ workspace: "open", sessionId: "c" });
      await (await store.open("open", "c")).append([user("m1", text)]);
      for (const id of ["a", "b"]) {
        const rows = await bloomsOf(WS, id);
        expect(rows.find((r) => r.kind !== "message")?.bloom).toBeNull();
        const bits = rows.find((r) => r.kind === "message")?.bloom ?? "";
        expect(bits).toHaveLength(2048);
        // Two bits per distinct trigram of the opened JSON: more than the text's own.
        expect(ones(bits)).toBeGreaterThan(text.length);
      }
      expect((await bloomsOf("open", "c")).every((r) => r.bloom === null)).toBe(true);
      // The same text under another session's key: other bits.
      const [a, b] = [await messageBloom(WS, "a"), await messageBloom(WS, "b")];
      let both = 0;
      for (let i = 0; i < 2048; i++) if (a?.[i] === "1" && b?.[i] === "1") both++;
      expect(both).toBeLessThan(ones(a ?? "") / 2);
      expect(await hitsOf(WS, "quokka")).toEqual(["b/m1", "a/m1"]);
    });

    it("the filters decide which sealed rows are opened; rows without one are opened and found", async () => {
      await store.create({ workspace: WS, sessionId: "a" });
      await (await store.open(WS, "a")).append([
        user("m1", "a quokka here"),
        user("m2", "another quokka", { parentId: "m1" }),
      ]);
      expect(await hitsOf(WS, "quokka")).toEqual(["a/m1", "a/m2"]);
      // A row whose filter lacks the needle's bits is not a candidate (it is never opened)...
      await admin`UPDATE sessiond_entries SET search_bloom = decode(repeat('00', 256), 'hex')
        WHERE workspace = ${WS} AND session_id = 'a' AND id = 'm1'`;
      expect(await freshHits(WS, "quokka")).toEqual(["a/m2"]);
      // ...and one without a filter (written before migration 17) is opened as before.
      await admin`UPDATE sessiond_entries SET search_bloom = NULL
        WHERE workspace = ${WS} AND session_id = 'a' AND kind = 'message'`;
      expect(await freshHits(WS, "quokka")).toEqual(["a/m1", "a/m2"]);
    });

    it("a replica keeps the filters it read while the session keeps its incarnation, and reads appended rows' next time", async () => {
      await store.create({ workspace: WS, sessionId: "a" });
      const s = await store.open(WS, "a");
      await s.append([user("m1", "a quokka here")]);
      expect(await hitsOf(WS, "quokka")).toEqual(["a/m1"]);
      await s.append([user("m2", "another quokka", { parentId: "m1" })]);
      expect(await hitsOf(WS, "quokka")).toEqual(["a/m1", "a/m2"]);
      const zero = () => admin`
        UPDATE sessiond_entries SET search_bloom = decode(repeat('00', 256), 'hex')
        WHERE workspace = ${WS} AND session_id = 'a' AND id = 'm1'`;
      // Filters change only with a new incarnation (redaction, erasure, seal):
      // this replica still tests the one it read...
      await zero();
      expect(await hitsOf(WS, "quokka")).toEqual(["a/m1", "a/m2"]);
      // ...and reads them again once the session has another.
      await admin`UPDATE sessiond_sessions SET incarnation = DEFAULT
        WHERE workspace = ${WS} AND session_id = 'a'`;
      expect(await hitsOf(WS, "quokka")).toEqual(["a/m2"]);
    });

    it("each search tests its own words' bits, whichever words the one before asked for", async () => {
      for (const [id, text] of [
        ["a", "an alpaca grazing"],
        ["b", "a bilby digging"],
      ]) {
        await store.import(WS, [info("r"), user("m1", text as string, { parentId: "r" })], {
          sessionId: id as string,
        });
      }
      expect(await hitsOf(WS, "alpaca")).toEqual(["a/m1"]);
      expect(await hitsOf(WS, "bilby")).toEqual(["b/m1"]);
      expect(await hitsOf(WS, "alpaca")).toEqual(["a/m1"]);
      expect(await hitsOf(WS, "digging bilby")).toEqual(["b/m1"]);
    });

    it("redaction gives the row the filter of its marker: the redacted words are not found", async () => {
      await store.create({ workspace: WS, sessionId: "a" });
      const s = await store.open(WS, "a");
      await s.append([user("m1", "my password is wombat")]);
      const before = await messageBloom(WS, "a");
      expect(await hitsOf(WS, "wombat")).toEqual(["a/m1"]);
      await s.redact(["m1"], { by: "ops", why: "pasted" });
      const after = await messageBloom(WS, "a");
      expect(after).toHaveLength(2048);
      expect(after).not.toEqual(before);
      expect(await hitsOf(WS, "wombat")).toEqual([]);
    });

    it(`pages across more than ${FILTERED_SESSIONS} sealed sessions exactly as over the same clear ones`, async () => {
      const count = FILTERED_SESSIONS + 20;
      const holds = (k: number) => k === 0 || k === 5 || k === count - 1;
      // 16 imports at a time: over a thousand sessions per workspace.
      for (const ws of [WS, "open"]) {
        for (let from = 0; from < count; from += 16) {
          const ks = [...Array(Math.min(16, count - from)).keys()].map((i) => from + i);
          await Promise.all(
            ks.map((k) =>
              store.import(
                ws,
                [
                  info("r"),
                  user("m1", `session ${k}${holds(k) ? " numbat" : ""}`, { parentId: "r" }),
                ],
                { sessionId: `s${String(k).padStart(4, "0")}` },
              ),
            ),
          );
        }
      }
      const pages = async (ws: string, order: "newest" | "oldest") => {
        const out: string[] = [];
        let pageToken: string | undefined;
        do {
          const page = await store.search({
            workspace: ws,
            query: "numbat",
            pageSize: 2,
            order,
            pageToken,
          });
          out.push(...page.hits.map((h) => h.sessionId));
          pageToken = page.nextPageToken;
        } while (pageToken);
        return out;
      };
      const expected = [...Array(count).keys()]
        .filter(holds)
        .map((k) => `s${String(k).padStart(4, "0")}`);
      expect(await pages(WS, "oldest")).toEqual(expected);
      expect(await pages(WS, "newest")).toEqual([...expected].reverse());
      expect(await pages(WS, "newest")).toEqual(await pages("open", "newest"));

      // A replica keeps every key it unwrapped for a search (up to 16,384): the
      // next search over these 1,044 sealed sessions unwraps none again.
      let unwraps = 0;
      const counting = new Proxy(keys, {
        get(target, name) {
          const v = Reflect.get(target, name, target);
          if (name === "unwrap") {
            return (...args: Parameters<typeof keys.unwrap>) => {
              unwraps++;
              return target.unwrap(...args);
            };
          }
          return typeof v === "function" ? v.bind(target) : v;
        },
      });
      const fresh = await PostgresEngine.open({
        url,
        encryption: { keys: counting, workspaces: [WS] },
      });
      try {
        const again = new SessionStore(fresh);
        await hitsOf(WS, "numbat", again);
        expect(unwraps).toBe(count);
        await hitsOf(WS, "numbat", again);
        expect(unwraps).toBe(count);
      } finally {
        await fresh.close();
      }
    });
  });
}
