import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import postgres from "postgres";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { assistant, user } from "../../../test/support/fixtures.js";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import { entryJson } from "../../core/codec/entry-to-json.js";
import { isSessiondError } from "../../core/errors.js";
import { withheldMarker } from "../../core/withheld.js";
import { SessionStore } from "../../store/session-store.js";
import { LocalKeyring } from "../keys/local-keyring.js";
import { checkOf, OpenedSegments } from "../seal/checkpoint-segments.js";
import { SessionSealer } from "../seal/sealed-payload.js";
import { PostgresEngine } from "./postgres-engine.js";

/**
 * The checkpoint of a sealed session on PostgreSQL (checkpoint.ts): a cold
 * read takes the rows it holds from it instead of opening them one by one,
 * reads exactly what the rows say (a row altered or moved since is opened
 * from the row), never uses another session's, and goes with every
 * rewrite of the session's sealed payloads or key, and with the session.
 */

const WS = "vault";
const MARKER = "PGCKPT-MARKER-7c3f";
const ENTRIES = 30;

if (pgSkip !== undefined) {
  it.skip(`PostgreSQL checkpoint tests (skipped: ${pgSkip})`, () => {});
} else {
  describe("checkpoints of sealed sessions on PostgreSQL", () => {
    let keyDir: string;
    let keys: LocalKeyring;
    let url: string;
    let admin: Awaited<ReturnType<typeof openPostgres>>["admin"];
    const engines: PostgresEngine[] = [];

    /** An engine sealing WS; writes a checkpoint after any cold read that opened a row unless told. */
    const engine = async (checkpointAfter = 1) => {
      const e = await PostgresEngine.open({
        url,
        checkpointAfter,
        encryption: { keys, workspaces: [WS] },
      });
      engines.push(e);
      return e;
    };

    /** A sealed session of ENTRIES messages, the marker in each. */
    const writeSession = async (sessionId: string, text = MARKER) => {
      const store = new SessionStore(await engine(Number.POSITIVE_INFINITY));
      await store.create({ workspace: WS, sessionId });
      const s = await store.open(WS, sessionId);
      for (let i = 0; i < ENTRIES; i += 2) {
        await s.append([
          user(`u${i}`, `${text} question ${i}`),
          assistant(`a${i}`, `${text} answer ${i}`),
        ]);
      }
    };

    /**
     * Every entry of the session as a fresh engine reads it (JSON), and how
     * many rows it opened one by one; the engine is closed after (a
     * checkpoint it writes is written then).
     */
    const coldRead = async (sessionId: string, checkpointAfter = 1) => {
      const e = await engine(checkpointAfter);
      const spy = vi.spyOn(SessionSealer.prototype, "open");
      try {
        const log = await e.load({ workspace: WS, sessionId });
        return { entries: log.slice(0).map(entryJson), opens: spy.mock.calls.length };
      } finally {
        spy.mockRestore();
        await e.close();
      }
    };

    const checkpointRows = async (sessionId: string) =>
      (
        await admin<{ n: number }[]>`
          SELECT count(*)::int AS n FROM sessiond_checkpoints
          WHERE workspace = ${WS} AND session_id = ${sessionId}`
      )[0]?.n ?? 0;

    /** The session's data key at work, unwrapped from its row as the engine does. */
    const sealerOf = async (sessionId: string) => {
      const [row] = await admin<{ key_id: string; key_version: number; wrapped: string }[]>`
        SELECT key_id, key_version, wrapped FROM sessiond_session_keys
        WHERE workspace = ${WS} AND session_id = ${sessionId}`;
      if (row === undefined) throw new Error("no key row");
      const dataKey = await keys.unwrap(
        { keyId: row.key_id, version: row.key_version, wrapped: row.wrapped },
        { workspace: WS, session: sessionId },
      );
      return new SessionSealer(WS, sessionId, dataKey);
    };

    /** Every segment of the checkpoint table opened with the session's key (the bytes of those that open). */
    const openedCheckpoint = async (sessionId: string) => {
      const sealer = await sealerOf(sessionId);
      const rows = await admin<{ first_seq: number; last_seq: number; segment: string }[]>`
        SELECT first_seq, last_seq, segment FROM sessiond_checkpoints`;
      return rows
        .map((r) => {
          const sealed = Buffer.from(r.segment, "base64");
          return sealer.openSegment(r.first_seq, r.last_seq, sealed)?.toString("utf8");
        })
        .filter((t) => t !== undefined)
        .join("");
    };

    beforeEach(async () => {
      keyDir = await mkdtemp(path.join(tmpdir(), "sessiond-pgckpt-"));
      keys = await LocalKeyring.open(path.join(keyDir, "keyring.json"), { create: true });
      const o = await openPostgres();
      engines.push(o.engine);
      url = o.url;
      admin = o.admin;
      await writeSession("s1");
    });

    afterEach(async () => {
      vi.restoreAllMocks();
      for (const e of engines.splice(0)) await e.close();
      await rm(keyDir, { recursive: true, force: true });
    });

    it("a cold read after a checkpoint opens no row one by one and reads the same entries as without one", async () => {
      const first = await coldRead("s1");
      expect(first.opens).toBe(ENTRIES);
      expect(await checkpointRows("s1")).toBeGreaterThan(0);
      const second = await coldRead("s1");
      expect(second.opens).toBe(0);
      expect(second.entries).toEqual(first.entries);
      await admin`DELETE FROM sessiond_checkpoints`;
      const without = await coldRead("s1", Number.POSITIVE_INFINITY);
      expect(without.opens).toBe(ENTRIES);
      expect(second.entries).toEqual(without.entries);
    });

    it("the checkpoint holds no clear content", async () => {
      await coldRead("s1");
      const rows = await admin<{ segment: string }[]>`SELECT segment FROM sessiond_checkpoints`;
      const bytes = Buffer.concat(rows.map((r) => Buffer.from(r.segment, "base64")));
      expect(bytes.length).toBeGreaterThan(0);
      expect(bytes.includes(MARKER)).toBe(false);
      expect(await openedCheckpoint("s1")).toContain(MARKER);
    });

    it("rows appended after the checkpoint are opened one by one, then a new checkpoint covers them", async () => {
      await coldRead("s1");
      const store = new SessionStore(await engine());
      await (await store.open(WS, "s1")).append([user("late", `${MARKER} late`)]);
      const after = await coldRead("s1");
      expect(after.opens).toBe(1);
      expect(after.entries.at(-1)).toContain("late");
      expect((await coldRead("s1")).opens).toBe(0);
    });

    it("rows written again as they were (new row versions) are still taken from the checkpoint, which then carries the new versions", async () => {
      await coldRead("s1");
      /** Each checkpoint entry's check against its row's xmin now. */
      const stamps = async () => {
        const sealer = await sealerOf("s1");
        const opened = new OpenedSegments(sealer);
        const segs = await admin<{ first_seq: number; last_seq: number; segment: string }[]>`
          SELECT first_seq, last_seq, segment FROM sessiond_checkpoints WHERE session_id = 's1'`;
        for (const r of segs) opened.add(r.first_seq, r.last_seq, Buffer.from(r.segment, "base64"));
        const rows = await admin<{ seq: number; xmin: string }[]>`
          SELECT seq, xmin FROM sessiond_entries WHERE workspace = ${WS} AND session_id = 's1' AND kind = 'message'`;
        return rows.map((r) => {
          const seg = opened.segment(r.seq);
          return seg === undefined ? "none" : checkOf(seg, opened.offset(r.seq)) === Number(r.xmin);
        });
      };
      expect(await stamps()).toEqual(Array(ENTRIES).fill(true));
      const before = await coldRead("s1");
      await admin`UPDATE sessiond_entries SET payload = payload WHERE workspace = ${WS} AND session_id = 's1'`;
      expect(await stamps()).toEqual(Array(ENTRIES).fill(false));
      const after = await coldRead("s1");
      expect(after.opens).toBe(0);
      expect(after.entries).toEqual(before.entries);
      expect(await stamps()).toEqual(Array(ENTRIES).fill(true));
    });

    it("a row whose clear part was altered after the checkpoint is read from the row", async () => {
      await coldRead("s1");
      // The timestamp is in clear and not bound to the sealed content: the row still opens.
      await admin`
        UPDATE sessiond_entries SET payload = replace(payload, '"timestamp":"2026-', '"timestamp":"2027-')
        WHERE workspace = ${WS} AND session_id = 's1' AND id = 'u4'`;
      const after = await coldRead("s1");
      expect(after.opens).toBe(1);
      const u4 = after.entries.find((e) => e.includes('"id":"u4"'));
      expect(u4).toContain('"timestamp":"2027-');
    });

    it("a row sealed again with other content after the checkpoint is read from the row", async () => {
      await coldRead("s1");
      const sealer = await sealerOf("s1");
      const [row] = await admin<{ seq: number; payload: string }[]>`
        SELECT seq, payload FROM sessiond_entries
        WHERE workspace = ${WS} AND session_id = 's1' AND id = 'a6'`;
      const before = (await coldRead("s1")).entries.find((e) => e.includes('"id":"a6"')) as string;
      const changed = before.replace(`${MARKER} answer 6`, "REWRITTEN answer");
      await admin`
        UPDATE sessiond_entries SET payload = ${sealer.sealPayload(changed)}
        WHERE workspace = ${WS} AND session_id = 's1' AND seq = ${row?.seq as number}`;
      const after = await coldRead("s1");
      expect(after.opens).toBe(1);
      expect(after.entries.find((e) => e.includes('"id":"a6"'))).toContain("REWRITTEN answer");
    });

    it("a payload moved to another row after the checkpoint still fails to open: DATA_LOSS", async () => {
      await coldRead("s1");
      expect((await coldRead("s1")).opens).toBe(0);
      // u2's sealed payload copied over u4's row: the same clear part but for its id and seq.
      await admin`
        UPDATE sessiond_entries d SET payload = regexp_replace(d.payload, '[{]"@sealed":"[^"]*"[}][}]$',
          (SELECT substring(s.payload from '[{]"@sealed":"[^"]*"[}][}]$') FROM sessiond_entries s
           WHERE s.workspace = ${WS} AND s.session_id = 's1' AND s.id = 'u2'))
        WHERE d.workspace = ${WS} AND d.session_id = 's1' AND d.id = 'u4'`;
      const e = await engine();
      await expect(e.load({ workspace: WS, sessionId: "s1" })).rejects.toSatisfy(
        (err) => isSessiondError(err, "DATA_LOSS") && String(err).includes('entry "u4"'),
      );
    });

    it("another session's checkpoint copied in is not used", async () => {
      await writeSession("s2", "OTHER-SESSION-TEXT");
      await coldRead("s2");
      const s1 = (await coldRead("s1", Number.POSITIVE_INFINITY)).entries;
      await admin`DELETE FROM sessiond_checkpoints WHERE session_id = 's1'`;
      await admin`
        INSERT INTO sessiond_checkpoints (workspace, session_id, first_seq, last_seq, segment)
        SELECT workspace, 's1', first_seq, last_seq, segment FROM sessiond_checkpoints
        WHERE session_id = 's2'`;
      const read = await coldRead("s1");
      expect(read.opens).toBe(ENTRIES);
      expect(read.entries).toEqual(s1);
      // Replaced by the session's own after that read.
      expect((await coldRead("s1")).opens).toBe(0);
    });

    it("a redaction deletes the checkpoint in its transaction: the redacted content is in no segment", async () => {
      await coldRead("s1");
      expect(await openedCheckpoint("s1")).toContain(MARKER);
      const store = new SessionStore(await engine(Number.POSITIVE_INFINITY));
      const s = await store.open(WS, "s1");
      await s.redact(
        Array.from({ length: ENTRIES / 2 }, (_, i) => [`u${2 * i}`, `a${2 * i}`]).flat(),
        { by: "ops", why: "test" },
      );
      expect(await openedCheckpoint("s1")).not.toContain(MARKER);
      const read = await coldRead("s1");
      expect(read.entries.join("")).not.toContain(MARKER);
      expect(read.entries.filter((e) => e.includes("REDACTED")).length).toBe(ENTRIES);
    });

    it("an erasure deletes the checkpoint with the key", async () => {
      await coldRead("s1");
      expect(await checkpointRows("s1")).toBeGreaterThan(0);
      const e = await engine();
      const marker = withheldMarker(WithheldReason.ERASED, "ops", timestampNow(), "gdpr");
      await e.erase({ workspace: WS, sessionId: "s1" }, marker);
      expect(await checkpointRows("s1")).toBe(0);
    });

    it("sessiond seal of a session with rows in clear deletes its checkpoint", async () => {
      await coldRead("s1");
      const opened = (await coldRead("s1", Number.POSITIVE_INFINITY)).entries;
      const u0 = opened.find((e) => e.includes('"id":"u0"')) as string;
      // A row written in clear (an older sessiond) into the sealed session.
      await admin`
        UPDATE sessiond_entries SET payload = ${u0}
        WHERE workspace = ${WS} AND session_id = 's1' AND id = 'u0'`;
      expect(await checkpointRows("s1")).toBeGreaterThan(0);
      const e = await engine();
      const out = await e.seal({ workspace: WS, sessionId: "s1" });
      expect(out.result).toBe("sealed");
      expect(await checkpointRows("s1")).toBe(0);
    });

    it("deleting the session deletes its checkpoint", async () => {
      await coldRead("s1");
      expect(await checkpointRows("s1")).toBeGreaterThan(0);
      const store = new SessionStore(await engine());
      await store.delete(WS, "s1");
      expect(await checkpointRows("s1")).toBe(0);
    });

    it("a checkpoint write that finds the session rewritten since its read writes nothing", async () => {
      const other = postgres(url, { max: 1, onnotice: () => {} });
      let blocked = false;
      try {
        await other.begin(async (tx) => {
          // Holds the row as a redaction does, then gives it a new incarnation.
          await tx`SELECT 1 FROM sessiond_sessions WHERE workspace = ${WS} AND session_id = 's1' FOR UPDATE`;
          const e = await engine();
          await e.load({ workspace: WS, sessionId: "s1" });
          for (let i = 0; i < 250 && !blocked; i++) {
            const [w] = await admin<{ n: number }[]>`
              SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE wait_event_type = 'Lock' AND query LIKE '%FOR KEY SHARE%'`;
            blocked = (w?.n ?? 0) > 0;
            if (!blocked) await new Promise((r) => setTimeout(r, 20));
          }
          await tx`UPDATE sessiond_sessions SET incarnation = DEFAULT WHERE workspace = ${WS} AND session_id = 's1'`;
        });
        for (const e of engines.splice(1)) await e.close();
        expect(blocked).toBe(true);
        expect(await checkpointRows("s1")).toBe(0);
      } finally {
        await other.end({ timeout: 1 });
      }
    });
  });
}
