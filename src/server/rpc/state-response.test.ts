import { create, fromBinary, toBinary, toJsonString } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { View } from "../../../gen/sessiond/v1/session_pb.js";
import { GetStateResponseSchema } from "../../../gen/sessiond/v1/session_service_pb.js";
import {
  assistant,
  buildLog,
  compaction,
  custom,
  label,
  user,
} from "../../../test/support/fixtures.js";
import { foldPath } from "../../core/fold.js";
import { openStore } from "../../index.js";
import { requestedBudget } from "./page-budget.js";
import { stateResponse, stateSizes } from "./state-response.js";

describe("stateResponse", () => {
  const log = buildLog(
    user("u1", "first"),
    assistant("a1", "answer"),
    label("l1", "mark"),
    compaction("c1", "summary", ["u1"]),
    user("u2", "ünïcode ✓"),
  );
  const state = foldPath(log.path(), View.CONTEXT);

  it("for binary codecs is byte-for-byte the encoding of the plain response", () => {
    const plain = toBinary(GetStateResponseSchema, create(GetStateResponseSchema, { state }));
    for (let i = 0; i < 2; i++) {
      const raw = toBinary(GetStateResponseSchema, stateResponse(state, "", false));
      expect(Buffer.from(raw).equals(Buffer.from(plain))).toBe(true);
      expect(fromBinary(GetStateResponseSchema, raw).state).toEqual(state);
    }
  });

  it("for binary codecs carries a page's messages and its next page token", () => {
    const page = { ...state, messages: state.messages.slice(1, 3) };
    const res = fromBinary(
      GetStateResponseSchema,
      toBinary(GetStateResponseSchema, stateResponse(page, "next", false)),
    );
    expect(res.state).toEqual(page);
    expect(res.nextPageToken).toBe("next");
  });

  it("for JSON codecs carries the state as a plain field", () => {
    const res = stateResponse(state, "next", true);
    expect(res.state).toBe(state);
    expect(res.nextPageToken).toBe("next");
    expect(res.$unknown).toBeUndefined();
  });
});

describe("a GetState page", () => {
  const store = openStore({ memory: true });
  afterEach(() => store.close());

  it("fills most of the largest response but never goes over it, in binary and in JSON", async () => {
    await store.create({ sessionId: "big" });
    const session = await store.open(undefined, "big");
    // The fold's other fields take room on every page too.
    await session.append(custom("c", "ns", { blob: "\u001b".repeat(2000) }));
    for (let b = 0; b < 3; b++) {
      const batch = [];
      for (let i = 0; i < 1000; i++) {
        const n = b * 1000 + i;
        const text = `${'\u001b[31m😀"é'.repeat(1 + (n % 40))} ${n}`;
        batch.push(n % 2 === 0 ? user(`u${n}`, text) : assistant(`a${n}`, text));
      }
      await session.append(batch);
    }
    const maxMessageBytes = 64 * 1024;
    for (const json of [false, true]) {
      let pageToken = "";
      let messages = 0;
      let pages = 0;
      do {
        const page = await session.statePage({
          view: View.HISTORY,
          pageToken,
          maxBytes: requestedBudget(0, maxMessageBytes),
          ...stateSizes(json),
        });
        const res = stateResponse(page.state, page.nextPageToken, json);
        const bytes = json
          ? Buffer.byteLength(toJsonString(GetStateResponseSchema, res))
          : toBinary(GetStateResponseSchema, res).length;
        expect(bytes).toBeLessThanOrEqual(maxMessageBytes);
        if (page.nextPageToken !== "") expect(bytes).toBeGreaterThan(maxMessageBytes / 2);
        messages += page.state.messages.length;
        pageToken = page.nextPageToken;
        pages++;
      } while (pageToken !== "");
      expect(messages).toBe(3000);
      expect(pages).toBeGreaterThan(3);
    }
  });
});
