import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, describe, expect, it } from "vitest";
import { Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { EntryKind, type TreeNode, TreeNodeSchema } from "../../../gen/sessiond/v1/session_pb.js";
import { GetTreeResponseSchema } from "../../../gen/sessiond/v1/session_service_pb.js";
import { label, user } from "../../../test/support/fixtures.js";
import { openStore } from "../../index.js";
import { requestedBudget, treeNodeSize } from "./page-budget.js";

/** Text that costs the most on the wire: escapes in JSON, 3- and 4-byte UTF-8, quotes. */
const NASTY = ["\u001b[31m", "\u0000", '"\\', "€✓", "😀", "é", "\u2028", "a"];

function nasty(i: number, length: number): string {
  let s = "";
  for (let k = 0; s.length < length; k++) s += NASTY[(i + k) % NASTY.length];
  return s;
}

/** The node's share of an encoded GetTreeResponse, per codec. */
function binarySize(n: TreeNode): number {
  return toBinary(GetTreeResponseSchema, create(GetTreeResponseSchema, { nodes: [n] })).length;
}

function jsonSize(n: TreeNode): number {
  return Buffer.byteLength(toJsonString(TreeNodeSchema, n)) + 1;
}

describe("treeNodeSize", () => {
  const nodes: TreeNode[] = [
    create(TreeNodeSchema, { id: "a" }),
    create(TreeNodeSchema, {
      id: "x".repeat(64),
      parentId: "y".repeat(64),
      kind: EntryKind.THINKING_LEVEL_CHANGE,
      seq: BigInt(Number.MAX_SAFE_INTEGER),
      label: nasty(0, 100_000),
      onCurrentPath: true,
      role: Role.ASSISTANT,
      preview: nasty(3, 80),
      timestamp: { seconds: 253_402_300_799n, nanos: 999_999_999 },
      leafId: "z".repeat(64),
    }),
    ...NASTY.map((_, i) =>
      create(TreeNodeSchema, {
        id: `e${i}`,
        parentId: "root",
        kind: EntryKind.MESSAGE,
        seq: BigInt(i + 2),
        role: Role.USER,
        preview: nasty(i, 80),
        label: nasty(i, 7),
        timestamp: timestampFromMs(1_790_000_000_123),
      }),
    ),
  ];

  it("never counts a node smaller than its binary encoding in the response", () => {
    const size = treeNodeSize(false);
    for (const n of nodes) expect(size(n)).toBeGreaterThanOrEqual(binarySize(n));
  });

  it("never counts a node smaller than its proto JSON", () => {
    const size = treeNodeSize(true);
    for (const n of nodes) expect(size(n)).toBeGreaterThanOrEqual(jsonSize(n));
  });
});

describe("a GetTree page", () => {
  const store = openStore({ memory: true });
  afterEach(() => store.close());

  /** 3000 entries with the costliest previews and labels. */
  async function nastySession() {
    await store.create({ sessionId: "big" });
    const session = await store.open(undefined, "big");
    for (let b = 0; b < 3; b++) {
      const batch = [];
      for (let i = 0; i < 1000; i++) {
        const n = b * 1000 + i;
        batch.push(n % 10 === 0 ? label(`l${n}`, nasty(n, 100)) : user(`u${n}`, nasty(n, 300)));
      }
      await session.append(batch);
    }
    return session;
  }

  it("fills most of the largest response but never goes over it, in binary and in JSON", async () => {
    const session = await nastySession();
    const maxMessageBytes = 64 * 1024;
    for (const json of [false, true]) {
      let pageToken = "";
      let pages = 0;
      do {
        const page = await session.treePage({
          pageToken,
          maxBytes: requestedBudget(0, maxMessageBytes),
          sizeOf: treeNodeSize(json),
        });
        const res = create(GetTreeResponseSchema, {
          nodes: page.nodes,
          leafId: page.leafId,
          headSeq: BigInt(page.headSeq),
          nextPageToken: page.nextPageToken,
        });
        const bytes = json
          ? Buffer.byteLength(toJsonString(GetTreeResponseSchema, res))
          : toBinary(GetTreeResponseSchema, res).length;
        expect(bytes).toBeLessThanOrEqual(maxMessageBytes);
        if (page.nextPageToken !== "") expect(bytes).toBeGreaterThan(maxMessageBytes / 2);
        pageToken = page.nextPageToken;
        pages++;
      } while (pageToken !== "");
      expect(pages).toBeGreaterThan(3);
    }
  });
});
