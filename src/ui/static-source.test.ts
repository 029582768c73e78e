import { create, toJson } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  assistantMessage,
  type Entry,
  EntrySchema,
  SessionMetaSchema,
  userMessage,
  View,
} from "../web/index.js";
import { type ExportData, staticClient } from "./static-source.js";

/**
 * The export's static client answers the viewer's calls as the server
 * would: the state at an entry (its path folded, paged from the end the way
 * state-view.ts reads it: the last 200, then the run before them), entries
 * by id in seq order, and NOT_FOUND for what the page does not hold.
 */

const N = 450;

function data(): ExportData {
  const entries: Entry[] = [];
  let parent: string | undefined;
  for (let i = 0; i < N; i++) {
    const init = i % 2 === 0 ? userMessage(`q${i}`) : assistantMessage(`a${i}`);
    entries.push(
      create(EntrySchema, { ...init, id: `e${i}`, parentId: parent, seq: BigInt(i + 1) }),
    );
    parent = `e${i}`;
  }
  const session = toJson(
    SessionMetaSchema,
    create(SessionMetaSchema, { id: "s1", workspace: "team", leafId: `e${N - 1}` }),
  );
  return {
    format: "sessiond-export/1",
    workspace: "team",
    session,
    leafId: `e${N - 1}`,
    headSeq: String(N),
    nodes: [],
    entries: entries.map((e) => toJson(EntrySchema, e)),
    blobs: { abc: btoa("hello") },
    omittedBlobs: { def: "9999999" },
    maxInlineBytes: 1000,
  };
}

describe("the HTML export's static client", () => {
  const client = staticClient(data());
  const req = { workspace: "team", session: "s1" };

  it("folds the path at an entry and pages it from the end as the viewer reads it", async () => {
    const first = await client.session.getState({
      ...req,
      atEntryId: `e${N - 1}`,
      view: View.CONTEXT,
      fromEnd: true,
      pageSize: 200,
    });
    expect(first.messageCount).toBe(BigInt(N));
    expect(first.state?.messages.map((m) => m.entryId)).toEqual(
      Array.from({ length: 200 }, (_, i) => `e${N - 200 + i}`),
    );
    expect(first.state?.currentLeafId).toBe(`e${N - 1}`);
    expect(first.state?.headSeq).toBe(BigInt(N));
    const rest = await client.session.getState({
      ...req,
      atEntryId: `e${N - 1}`,
      view: View.CONTEXT,
      fromEnd: true,
      pageSize: 2000,
      pageToken: first.nextPageToken,
    });
    expect(rest.nextPageToken).toBe("");
    expect(rest.state?.messages.map((m) => m.entryId)).toEqual(
      Array.from({ length: N - 200 }, (_, i) => `e${i}`),
    );
    // At an earlier entry: the path up to it only.
    const at = await client.session.getState({ ...req, atEntryId: "e9", view: View.HISTORY });
    expect(at.state?.messages.map((m) => m.entryId)).toEqual(
      Array.from({ length: 10 }, (_, i) => `e${i}`),
    );
  });

  it("answers entries by id in seq order, and blobs by hash", async () => {
    const res = await client.session.getEntries({ ...req, entryIds: ["e7", "e2", "e7"] });
    expect(res.entries.map((e) => e.id)).toEqual(["e2", "e7"]);
    const chunks = [];
    for await (const c of client.store.getBlob({ workspace: "team", sha256: "abc" })) {
      chunks.push(new TextDecoder().decode(c.data));
    }
    expect(chunks).toEqual(["hello"]);
  });

  it("is NOT_FOUND for another session, an unknown entry, and a blob left out (saying why)", async () => {
    const code = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (err) {
        return [ConnectError.from(err).code, ConnectError.from(err).rawMessage];
      }
      return ["no error"];
    };
    expect(await code(client.session.getTree({ workspace: "team", session: "other" }))).toEqual([
      Code.NotFound,
      'session "other" is not in this export',
    ]);
    expect(await code(client.session.getEntries({ ...req, entryIds: ["nope"] }))).toEqual([
      Code.NotFound,
      'entry "nope" is not in this export',
    ]);
    const blob = (async () => {
      for await (const _ of client.store.getBlob({ workspace: "team", sha256: "def" })) {
        // nothing
      }
    })();
    const [c, message] = await code(blob);
    expect(c).toBe(Code.NotFound);
    expect(message).toContain("larger than --max-inline-bytes 1000");
    expect(await code(client.store.searchEntries({ workspace: "team", query: "x" }))).toEqual([
      Code.Unimplemented,
      "StoreService.searchEntries is not available in an exported page",
    ]);
  });
});
