/**
 * RedactEntries over a real server, on both fronts (native gRPC is served
 * by grpc-js, Connect by connect-node; both run the handlers of
 * src/server/rpc): the entries keep the tree and read as withheld, the
 * watchers get a withheld_entries event after the entries up to it, the
 * CONTEXT shows "[redacted]", search and the data dir no longer hold the
 * content, a retry writes nothing new, refusals name the id; and the CLI's
 * `sessiond redact`.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Role, WithheldReason } from "../../gen/sessiond/v1/entry_pb.js";
import type { WatchEntriesResponse } from "../../gen/sessiond/v1/session_service_pb.js";
import { textOf } from "../../src/core/message-text.js";
import { runCli } from "../harness/cli.js";
import { client, serverUnderTest, uniqueWorkspace } from "./support/server.js";

const SECRET = "sk-live-WIREMARKER-5150";

let srv: Awaited<ReturnType<typeof serverUnderTest>>;

beforeAll(async () => {
  srv = await serverUnderTest();
});

afterAll(async () => {
  await srv?.close();
});

const text = (id: string, role: Role, value: string) => ({
  id,
  kind: {
    case: "message" as const,
    value: { role, content: [{ part: { case: "text" as const, value } }] },
  },
});

/** Every file under `dir` that holds `needle`. */
async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(dir, { recursive: true })) {
    const file = join(dir, name);
    // A lock file may come and go while the directory is read: skip what vanished.
    const bytes = await readFile(file).catch((e: NodeJS.ErrnoException) => {
      if (e.code === "ENOENT" || e.code === "EISDIR") return undefined;
      throw e;
    });
    if (bytes?.includes(needle)) out.push(name);
  }
  return out;
}

describe.each(["grpc", "connect"] as const)("RedactEntries over %s", (protocol) => {
  test("redacts, tells the watcher in order, hides the content from reads, CONTEXT, search and the files", async () => {
    const c = client(srv.url, protocol);
    const ws = uniqueWorkspace("redact");
    const id = (await c.store.createSession({ workspace: ws, title: "r" })).session?.id as string;
    await c.session.append({
      workspace: ws,
      session: id,
      entries: [text("u1", Role.USER, `key ${SECRET}`), text("a1", Role.ASSISTANT, "noted")],
    });

    // A watcher from the start: the entries, then the redaction, then what follows.
    const ctl = new AbortController();
    const got: WatchEntriesResponse[] = [];
    const watching = (async () => {
      try {
        for await (const r of c.session.watchEntries(
          { workspace: ws, session: id, afterSeq: 0n },
          { signal: ctl.signal, timeoutMs: 60_000 },
        )) {
          got.push(r);
          if (r.event.case === "entry" && r.event.value.id === "u2") return;
        }
      } catch (err) {
        if (!ctl.signal.aborted) throw err;
      }
    })();
    while (!got.some((r) => r.event.case === "entry" && r.event.value.id === "a1")) {
      await new Promise((r) => setTimeout(r, 20));
    }

    const res = await c.session.redactEntries({
      workspace: ws,
      session: id,
      entryIds: ["u1"],
      why: "pasted a key",
      by: "alice",
    });
    expect(res.entries.map((e) => [e.id, e.seq, e.kind.case])).toEqual([["u1", 2n, "message"]]);
    expect(res.entries[0]?.withheld?.reason).toBe(WithheldReason.REDACTED);
    expect(res.entries[0]?.withheld?.by).toBe("alice");
    expect(res.headSeq).toBe(3n);
    await c.session.append({
      workspace: ws,
      session: id,
      entries: [text("u2", Role.USER, "after")],
    });
    await watching;
    ctl.abort();
    const events = got
      .filter((r) => r.event.case !== "heartbeat")
      .map((r) =>
        r.event.case === "entry"
          ? `entry ${r.event.value.id}`
          : r.event.case === "withheldEntries"
            ? `withheld ${r.event.value.entries.map((e) => e.id).join(",")} at ${r.event.value.headSeq}`
            : "?",
      );
    expect(events.slice(1)).toEqual(["entry u1", "entry a1", "withheld u1 at 3", "entry u2"]);

    const entries = (await c.session.getEntries({ workspace: ws, session: id, afterSeq: 0n }))
      .entries;
    expect(entries.map((e) => e.id).slice(1)).toEqual(["u1", "a1", "u2"]);
    expect(entries[1]?.withheld?.why).toBe("pasted a key");
    expect(entries[1]?.parentId).toBe(entries[0]?.id);
    const state = (await c.session.getState({ workspace: ws, session: id })).state;
    expect(state?.messages.map((m) => textOf(m))).toEqual(["[redacted]", "noted", "after"]);
    const found = await c.store.searchEntries({ workspace: ws, query: "WIREMARKER" });
    expect(found.hits).toEqual([]);
    if (srv.local !== undefined && srv.local.storage === "jsonl") {
      expect(await filesHolding(srv.local.dataDir, "WIREMARKER")).toEqual([]);
    }

    // A retry answers the same entries and marker.
    const again = await c.session.redactEntries({
      workspace: ws,
      session: id,
      entryIds: ["u1"],
      why: "other",
      by: "bob",
    });
    expect(again.entries[0]?.withheld?.by).toBe("alice");
  });

  test("refusals name the entry and the code", async () => {
    const c = client(srv.url, protocol);
    const ws = uniqueWorkspace("redact-no");
    const meta = (await c.store.createSession({ workspace: ws })).session;
    const id = meta?.id as string;
    const refused = async (entryIds: string[]) => {
      try {
        await c.session.redactEntries({ workspace: ws, session: id, entryIds, why: "x" });
      } catch (err) {
        return ConnectError.from(err);
      }
      throw new Error("expected a refusal");
    };
    const ghost = await refused(["ghost"]);
    expect([Code[ghost.code], ghost.rawMessage]).toEqual([
      Code[Code.NotFound],
      expect.stringContaining('"ghost"'),
    ]);
    const root = meta?.leafId as string;
    const info = await refused([root]);
    expect(Code[info.code]).toBe(Code[Code.InvalidArgument]);
    expect(info.rawMessage).toContain(root);
    expect(info.rawMessage).not.toMatch(/\n\s+at |\.ts:\d+/);
  });
});

test("sessiond redact: by entry id prefix, --why required", async () => {
  const c = client(srv.url, "grpc");
  const ws = uniqueWorkspace("redact-cli");
  const id = (await c.store.createSession({ workspace: ws })).session?.id as string;
  await c.session.append({
    workspace: ws,
    session: id,
    entries: [text("cli-entry-one", Role.USER, `key ${SECRET}`)],
  });
  const missing = await runCli(["--server", srv.url, "-w", ws, "redact", id, "cli-entry"]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain("--why");
  const r = await runCli([
    "--server",
    srv.url,
    "-w",
    ws,
    "redact",
    id,
    "cli-entry",
    "--why",
    "pasted a key",
    "--by",
    "ops",
  ]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("redacted cli-entry-one (seq 2, message)\n");
  const e = (
    await c.session.getEntries({ workspace: ws, session: id, entryIds: ["cli-entry-one"] })
  ).entries[0];
  expect([e?.withheld?.by, e?.withheld?.why]).toEqual(["ops", "pasted a key"]);
});
