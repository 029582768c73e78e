/**
 * Large parts as blobs over the wire (issue 36, items 2-3), on every
 * protocol: an image of 5 MiB, larger than any message the server takes,
 * is uploaded by the client in chunks and appended as a reference; the
 * state, the entries and a watch give it back to the caller byte for byte;
 * a caller that asks for references gets them, and reads the blob with
 * GetBlob in ranges; a screenshot appended in two sessions is one file on
 * disk; a reference to a blob nobody uploaded is FAILED_PRECONDITION
 * naming it, and nothing is stored.
 */
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import * as path from "node:path";
import { toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BlobPart, type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import {
  GetEntriesResponseSchema,
  GetStateResponseSchema,
} from "../../gen/sessiond/v1/session_service_pb.js";
import { readState } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { ON_POSTGRES, removeDataDir } from "../harness/server.js";
import {
  client,
  PROTOCOLS,
  readAll,
  type SessiondProcess,
  startSessiond,
  uniqueWorkspace,
} from "./support/server.js";

let server: SessiondProcess;

beforeAll(async () => {
  server = await startSessiond();
});
afterAll(async () => {
  if (process.env.BLOB_DEBUG) console.log(server.stderr());
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

function bytes(size: number, seed: number): Uint8Array {
  const b = new Uint8Array(size);
  for (let i = 0; i < size; i++) b[i] = (i * 197 + seed * 13 + (i >> 9)) & 0xff;
  return b;
}

const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

function imageEntry(id: string, data: Uint8Array) {
  return {
    id,
    kind: {
      case: "message" as const,
      value: {
        role: Role.USER,
        content: [
          { part: { case: "text" as const, value: "look at this" } },
          { part: { case: "image" as const, value: { mimeType: "image/png", data } } },
        ],
      },
    },
  };
}

/** The blobs a workspace holds: files in the data dir, or rows on PostgreSQL. */
async function blobFiles(ws: string): Promise<string[]> {
  if (ON_POSTGRES) {
    const sql = postgres(server.storage, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql<{ sha256: string }[]>`
        SELECT sha256 FROM sessiond_blobs WHERE workspace = ${ws} AND NOT upload ORDER BY sha256`;
      return rows.map((r) => r.sha256);
    } finally {
      await sql.end({ timeout: 1 });
    }
  }
  const root = path.join(server.dataDir, ws, "blobs");
  const out: string[] = [];
  for (const d of await readdir(root)) {
    if (d === "uploads") continue;
    out.push(...(await readdir(path.join(root, d))).filter((n) => !n.startsWith(".")));
  }
  return out.sort();
}

describe.each(PROTOCOLS)("blobs over %s", (protocol) => {
  it("a 5 MiB image goes up in chunks and comes back the same from state, entries and watch", async () => {
    const c = client(server.url, protocol);
    const ws = uniqueWorkspace(`blob-${protocol}`);
    const { session } = await c.store.createSession({ workspace: ws });
    const id = session?.id ?? "";
    const image = bytes(5 * 1024 * 1024, 1);
    const text = "ß".repeat(100_000); // 200 KB inline: the server makes it a blob
    await c.session.append({ workspace: ws, session: id, entries: [imageEntry("img", image)] });
    await c.session.append({
      workspace: ws,
      session: id,
      entries: [
        {
          id: "a1",
          kind: {
            case: "message",
            value: { role: Role.ASSISTANT, content: [{ part: { case: "text", value: text } }] },
          },
        },
      ],
    });

    const state = (await readState(c, { workspace: ws, session: id })).state;
    const [u, a] = state?.messages ?? [];
    const img = u?.message?.content[1]?.part;
    expect(img?.case).toBe("image");
    expect(img?.case === "image" && Buffer.compare(img.value.data, image)).toBe(0);
    expect(img?.case === "image" && img.value.mimeType).toBe("image/png");
    expect(a?.message?.content[0]?.part).toEqual({ case: "text", value: text });

    const entries = await c.session.getEntries({ workspace: ws, session: id });
    const stored = entries.entries.find((e) => e.id === "img");
    const part = stored?.kind.case === "message" ? stored.kind.value.content[1]?.part : undefined;
    expect(part?.case === "image" && sha(part.value.data)).toBe(sha(image));

    const ac = new AbortController();
    const seen: string[] = [];
    for await (const ev of c.session.watchEntries(
      { workspace: ws, session: id },
      { signal: ac.signal },
    )) {
      if (ev.event.case !== "entry") continue;
      const e = ev.event.value;
      if (e.id === "img" && e.kind.case === "message") {
        const p = e.kind.value.content[1]?.part;
        seen.push(p?.case === "image" ? sha(p.value.data) : `unresolved ${p?.case}`);
      }
      if (e.id === "a1") break;
    }
    expect(seen).toEqual([sha(image)]);
  });

  it("large parts go up first only when the request cannot carry them", async () => {
    const calls: string[] = [];
    const c = client(server.url, protocol, {
      interceptors: [
        (next) => (req) => {
          calls.push(req.method.name);
          return next(req);
        },
      ],
    });
    const ws = uniqueWorkspace(`blob-inline-${protocol}`);
    const { session } = await c.store.createSession({ workspace: ws });
    const id = session?.id ?? "";
    const MiB = 1024 * 1024;
    // One 1 MiB image fits half a 4 MiB request: one Append, the server makes the blob.
    const one = bytes(MiB, 7);
    calls.length = 0;
    await c.session.append({ workspace: ws, session: id, entries: [imageEntry("one", one)] });
    expect(calls).toEqual(["Append"]);
    expect(await blobFiles(ws)).toEqual([sha(one)]);
    // 1.5 + 1 + 0.75 MiB in one request: the largest goes up alone, the other two fit.
    const big = [bytes(1.5 * MiB, 8), bytes(MiB, 9), bytes(0.75 * MiB, 10)];
    calls.length = 0;
    await c.session.append({
      workspace: ws,
      session: id,
      entries: big.map((b, i) => imageEntry(`big${i}`, b)),
    });
    expect(calls).toEqual(["PutBlob", "PutBlob", "Append"]); // 1.5 MiB in two 1 MiB chunks
    expect(await blobFiles(ws)).toEqual([one, ...big].map((b) => sha(b)).sort());
    const state = (await readState(c, { workspace: ws, session: id })).state;
    const got = (state?.messages ?? []).map((m) => {
      const p = m.message?.content[1]?.part;
      return p?.case === "image" ? sha(p.value.data) : `unresolved ${p?.case}`;
    });
    expect(got).toEqual([one, ...big].map((b) => sha(b)));
  });

  it("an upload another client moves on meanwhile goes on from what the server holds", async () => {
    // Two clients attach the same 3.5 MiB image (through two replicas,
    // say): the other one's half-MiB chunks land between this client's
    // first and second chunk, so its second chunk (at 1 MiB) starts short
    // of what the server holds and ends past it: FAILED_PRECONDITION,
    // after which the client asks where the upload stands and goes on.
    const MiB = 1024 * 1024;
    const image = bytes(3.5 * MiB, 11);
    const h = sha(image);
    const ws = uniqueWorkspace(`blob-race-${protocol}`);
    const other = client(server.url, protocol);
    const answers: string[] = [];
    let puts = 0;
    const c = client(server.url, protocol, {
      interceptors: [
        (next) => async (req) => {
          if (req.method.name === "PutBlob" && ++puts === 2) {
            for (const at of [0, 0.5 * MiB, MiB]) {
              await other.store.putBlob({
                workspace: ws,
                sha256: h,
                size: BigInt(image.length),
                offset: BigInt(at),
                data: image.subarray(at, at + MiB / 2),
              });
            }
          }
          try {
            const res = await next(req);
            if (req.method.name === "PutBlob") answers.push("ok");
            return res;
          } catch (err) {
            answers.push(
              ConnectError.from(err).code === Code.FailedPrecondition ? "moved" : "other",
            );
            throw err;
          }
        },
      ],
    });
    const { session } = await c.store.createSession({ workspace: ws });
    const id = session?.id ?? "";
    await c.session.append({ workspace: ws, session: id, entries: [imageEntry("img", image)] });
    // chunk 0 ok (1 MiB held); the other brings it to 1.5 MiB; chunk 1 MiB refused; asked: 1.5 MiB; 1.5-2.5, 2.5-3.5 stored.
    expect(answers).toEqual(["ok", "moved", "ok", "ok", "ok"]);
    expect(await blobFiles(ws)).toEqual([h]);
    const state = (await readState(c, { workspace: ws, session: id })).state;
    const p = state?.messages[0]?.message?.content[1]?.part;
    expect(p?.case === "image" ? sha(p.value.data) : p?.case).toBe(h);
  });

  it("a caller that asks for references gets them and reads the blob with GetBlob, in ranges", async () => {
    const c = client(server.url, protocol);
    const raw = client(server.url, protocol, { blobs: "refs" });
    const ws = uniqueWorkspace(`ref-${protocol}`);
    const { session } = await c.store.createSession({ workspace: ws });
    const image = bytes(2 * 1024 * 1024 + 3, 2);
    await c.session.append({
      workspace: ws,
      session: session?.id ?? "",
      entries: [imageEntry("img", image)],
    });
    const state = (await raw.session.getState({ workspace: ws, session: session?.id ?? "" })).state;
    const ref = state?.messages.at(-1)?.message?.content[1]?.part;
    expect(ref?.case).toBe("blob");
    if (ref?.case !== "blob") return;
    expect(ref.value).toMatchObject({
      sha256: sha(image),
      size: BigInt(image.length),
      part: BlobPart.IMAGE,
      mediaType: "image/png",
    });
    const chunks = [];
    for await (const ch of raw.store.getBlob({ workspace: ws, sha256: sha(image) }))
      chunks.push(ch);
    expect(chunks.map((ch) => [Number(ch.offset), ch.data.length])).toEqual([
      [0, 1024 * 1024],
      [1024 * 1024, 1024 * 1024],
      [2 * 1024 * 1024, 3],
    ]);
    const range = [];
    for await (const ch of raw.store.getBlob({
      workspace: ws,
      sha256: sha(image),
      offset: 1000n,
      length: 10n,
    })) {
      range.push(...ch.data);
    }
    expect(range).toEqual([...image.subarray(1000, 1010)]);
  });

  it("the same screenshot in two sessions is one file; an unknown reference is refused naming it", async () => {
    const c = client(server.url, protocol);
    const ws = uniqueWorkspace(`dedup-${protocol}`);
    const shot = bytes(300 * 1024, 3);
    for (const title of ["one", "two"]) {
      const { session } = await c.store.createSession({ workspace: ws, title });
      await c.session.append({
        workspace: ws,
        session: session?.id ?? "",
        entries: [imageEntry("shot", shot)],
      });
    }
    expect(await blobFiles(ws)).toEqual([sha(shot)]);

    const { session } = await c.store.createSession({ workspace: ws });
    const missing = sha("never uploaded");
    const err = await c.session
      .append({
        workspace: ws,
        session: session?.id ?? "",
        entries: [
          {
            id: "bad",
            kind: {
              case: "message",
              value: {
                role: Role.USER,
                content: [
                  {
                    part: {
                      case: "blob",
                      value: { sha256: missing, size: 14n, part: BlobPart.TEXT },
                    },
                  },
                ],
              },
            },
          },
        ],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((err as ConnectError).rawMessage).toContain(missing);
    const after = await c.session.getEntries({ workspace: ws, session: session?.id ?? "" });
    expect(after.entries.map((e) => e.id)).not.toContain("bad");
    const notFound = await (async () => {
      for await (const _ of c.store.getBlob({ workspace: ws, sha256: missing }));
    })().catch((e: unknown) => e);
    expect((notFound as ConnectError).code).toBe(Code.NotFound);
  });
});

describe("export | import of a session with blobs", () => {
  it("round-trips it byte for byte, the blobs carried inline and stored again once", async () => {
    const c = client(server.url, "grpc");
    const ws = uniqueWorkspace("blob-export");
    const { session } = await c.store.createSession({ workspace: ws, title: "shots" });
    const id = session?.id ?? "";
    const shot = bytes(1024 * 1024, 4);
    for (let i = 0; i < 3; i++) {
      await c.session.append({ workspace: ws, session: id, entries: [imageEntry(`s${i}`, shot)] });
    }
    await c.session.append({
      workspace: ws,
      session: id,
      entries: [
        {
          id: "out",
          kind: {
            case: "message",
            value: {
              role: Role.USER,
              content: [{ part: { case: "text", value: "o".repeat(5_000_000) } }],
            },
          },
        },
      ],
    });
    const target = `http://127.0.0.1:${server.port}`;
    const exported = await runCli(["export", id, "--server", target, "--workspace", ws], {
      timeoutMs: 120_000,
    });
    expect(exported.code, exported.stderr).toBe(0);
    const copy = uniqueWorkspace("blob-import");
    const imported = await runCli(["import", "-", "--server", target, "--workspace", copy], {
      input: exported.stdout,
      timeoutMs: 120_000,
    });
    expect(imported.code, imported.stderr).toBe(0);
    const original = await readAll(c, ws, id);
    const again = await readAll(c, copy, id);
    expect(again.length).toBe(original.length);
    for (let i = 0; i < original.length; i++) {
      const a = toBinary(EntrySchema, original[i] as Entry);
      const b = toBinary(EntrySchema, again[i] as Entry);
      expect(Buffer.compare(a, b), `entry ${original[i]?.id}`).toBe(0);
    }
    // One file per distinct content in the new workspace.
    expect(await blobFiles(copy)).toEqual([sha(shot), sha("o".repeat(5_000_000))].sort());
  });
});

describe.each(PROTOCOLS)("inline_blobs over %s", (protocol) => {
  it("GetEntries and GetState put blobs back within the page budget; larger ones stay references", async () => {
    const c = client(server.url, protocol);
    const raw = client(server.url, protocol, { blobs: "refs" });
    const ws = uniqueWorkspace(`inline-${protocol}`);
    const { session } = await c.store.createSession({ workspace: ws });
    const id = session?.id ?? "";
    const outputs = Array.from({ length: 6 }, (_, i) => `${i} `.repeat(150_000)); // 300 KB each
    for (const [i, out] of outputs.entries()) {
      await c.session.append({
        workspace: ws,
        session: id,
        entries: [
          {
            id: `o${i}`,
            kind: {
              case: "message",
              value: { role: Role.USER, content: [{ part: { case: "text", value: out } }] },
            },
          },
        ],
      });
    }
    const big = bytes(700_000, 9); // over half the budget: stays a reference
    await c.session.append({ workspace: ws, session: id, entries: [imageEntry("big", big)] });
    const budget = 1_000_000;

    const seen = new Map<string, string>();
    let after = 0n;
    let pages = 0;
    for (;;) {
      const page = await raw.session.getEntries({
        workspace: ws,
        session: id,
        afterSeq: after,
        inlineBlobs: true,
        maxResponseBytes: budget,
      });
      if (page.entries.length === 0) break;
      pages++;
      expect(toBinary(GetEntriesResponseSchema, page).length).toBeLessThanOrEqual(budget);
      for (const e of page.entries) {
        const p = e.kind.case === "message" ? e.kind.value.content.at(-1)?.part : undefined;
        seen.set(e.id, p?.case === "text" ? `text ${p.value.length}` : `${p?.case}`);
      }
      after = page.entries.at(-1)?.seq ?? after;
      if (after >= page.headSeq) break;
    }
    expect(pages).toBeGreaterThanOrEqual(2); // 300 KB outputs: three at most to a 1 MB page
    for (let i = 0; i < 6; i++) expect(seen.get(`o${i}`)).toBe(`text ${outputs[i]?.length}`);
    expect(seen.get("big")).toBe("blob");

    const first = await raw.session.getState({
      workspace: ws,
      session: id,
      inlineBlobs: true,
      maxResponseBytes: budget,
    });
    expect(toBinary(GetStateResponseSchema, first).length).toBeLessThanOrEqual(budget);
    expect(first.nextPageToken).not.toBe("");
    const parts = first.state?.messages.map((m) => m.message?.content.at(-1)?.part.case);
    expect(parts?.length).toBeGreaterThan(0);
    expect(parts?.every((k) => k === "text")).toBe(true);
    // Without the flag the same state is one page of references.
    const refs = await raw.session.getState({
      workspace: ws,
      session: id,
      maxResponseBytes: budget,
    });
    expect(refs.nextPageToken).toBe("");
    expect(refs.state?.messages.map((m) => m.message?.content.at(-1)?.part.case)).toEqual([
      ...Array(6).fill("blob"),
      "blob",
    ]);
  });
});
