import { create } from "@bufbuild/protobuf";
import { createContextValues, type UnaryRequest } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import {
  type ImportSessionRequest,
  ImportSessionRequestSchema,
} from "../../gen/sessiond/v1/store_service_pb.js";
import { idsInterceptor } from "./ids-interceptor.js";

/** The request as the interceptor hands it on (it fills in place, before the first attempt). */
async function sent(message: ImportSessionRequest): Promise<ImportSessionRequest> {
  let seen: ImportSessionRequest | undefined;
  const next = async (req: UnaryRequest) => {
    seen = req.message as ImportSessionRequest;
    return { stream: false, message: { created: true } } as never;
  };
  const contextValues = createContextValues();
  await idsInterceptor()(next as never)({ stream: false, message, contextValues } as never);
  return seen as ImportSessionRequest;
}

describe("ids filled in before an ImportSession leaves the client, so a retry imports the same log", () => {
  it("the session id is the one the root records, else a new one", async () => {
    const recorded = create(EntrySchema, {
      id: "r",
      kind: { case: "sessionInfo", value: { sessionId: "kept" } },
    });
    expect(
      (await sent(create(ImportSessionRequestSchema, { entries: [recorded] }))).sessionId,
    ).toBe("kept");
    const unnamed = create(EntrySchema, { id: "r", kind: { case: "sessionInfo", value: {} } });
    const req = await sent(create(ImportSessionRequestSchema, { entries: [unnamed] }));
    expect(req.sessionId).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}$/);
  });

  it("entries without id or timestamp get them; given ones stay", async () => {
    const given = create(EntrySchema, {
      id: "r",
      timestamp: { seconds: 5n, nanos: 0 },
      kind: { case: "sessionInfo", value: {} },
    });
    const bare = create(EntrySchema, {
      parentId: "r",
      kind: { case: "label", value: { label: "x" } },
    });
    const req = await sent(create(ImportSessionRequestSchema, { entries: [given, bare] }));
    expect(req.entries[0]?.id).toBe("r");
    expect(req.entries[0]?.timestamp?.seconds).toBe(5n);
    expect(req.entries[1]?.id).not.toBe("");
    expect(req.entries[1]?.timestamp).toBeDefined();
  });
});
