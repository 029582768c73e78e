/**
 * Fixtures of the text-search tests (src/store/search*.test.ts): a store on
 * a clock that orders sessions, and messages made of any kind of part.
 */
import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import type { StorageEngine } from "../../src/storage/engine.js";
import { SessionStore } from "../../src/store/session-store.js";

/**
 * An engine as the given one with some methods replaced, and without an
 * index of entry text (searchCandidates): searches over it scan session by
 * session, the path of engines that have none.
 */
export function scanning(
  engine: StorageEngine,
  overrides: Partial<StorageEngine> = {},
): StorageEngine {
  return Object.assign(Object.create(engine) as StorageEngine, {
    searchCandidates: undefined,
    ...overrides,
  });
}

/** A store on a clock that moves one second per session, so creation order is known. */
export function storeOn(engine: StorageEngine, limits = {}): SessionStore {
  let t = Date.parse("2026-05-01T00:00:00Z");
  const now = () => {
    t += 1000;
    return new Date(t);
  };
  return new SessionStore(engine, { now, limits });
}

export type Part = { text: string } | { thinking: string } | { args: JsonValue } | { image: true };

export function message(role: Role, parts: readonly Part[], id?: string) {
  return create(EntrySchema, {
    id,
    kind: {
      case: "message",
      value: {
        role,
        content: parts.map((p) =>
          "text" in p
            ? { part: { case: "text" as const, value: p.text } }
            : "thinking" in p
              ? { part: { case: "thinking" as const, value: { thinking: p.thinking } } }
              : "args" in p
                ? {
                    part: {
                      case: "toolCall" as const,
                      value: {
                        id: `c${Math.random()}`.replace(".", ""),
                        name: "t",
                        arguments: fromJson(ValueSchema, p.args),
                      },
                    },
                  }
                : {
                    part: {
                      case: "image" as const,
                      value: { mimeType: "image/png", data: new Uint8Array([1]) },
                    },
                  },
        ),
      },
    },
  });
}

export const say = (text: string, id?: string) => message(Role.USER, [{ text }], id);
