import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { type Entry, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { message, type Part, say, storeOn } from "../../../test/support/search-fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../../test/support/store-engines.js";
import type { EngineFixture } from "../../../test/support/store-model.js";
import type { SessionStore } from "../session-store.js";

/**
 * Search results against a brute-force scan written from the proto's words, on random
 * sessions and queries, paged at random sizes, on every engine (JSONL: through its
 * pre-filter of raw records).
 */
for (const factory of STORE_ENGINE_FACTORIES) {
  describe(`search on ${factory.name}`, () => {
    let fixture: EngineFixture | undefined;
    afterEach(async () => {
      await fixture?.dispose();
      fixture = undefined;
    });
    async function open(limits = {}): Promise<SessionStore> {
      fixture = await factory.open();
      return storeOn(fixture.engine, limits);
    }

    it("results equal a brute-force scan of every session (random data, random pages)", async () => {
      const alphabet = [
        "ab",
        "Ab",
        "AB",
        "k",
        "\u212a",
        "I",
        "\u0130",
        "s",
        "\u017f",
        "\u03c2",
        "\u03a3",
        '"',
        "\\",
        "\n",
        " ",
        "x",
        "😀",
        "é",
      ];
      const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 12 }).map((a) => a.join(""));
      const part: fc.Arbitrary<Part> = fc.oneof(
        text.map((t) => ({ text: t })),
        text.map((t) => ({ thinking: t })),
        text.map((t) => ({ args: { v: t, n: [1, t] } })),
      );
      const sessions = fc.array(
        fc.array(fc.array(part, { minLength: 1, maxLength: 3 }), { maxLength: 5 }),
        {
          minLength: 1,
          maxLength: 4,
        },
      );
      const query = fc
        .array(fc.constantFrom(...alphabet.filter((c) => c.trim() !== "")), {
          minLength: 1,
          maxLength: 3,
        })
        .chain((a) => fc.constantFrom(a.join(""), a.join(" ")));
      await fc.assert(
        fc.asyncProperty(
          sessions,
          query,
          fc.integer({ min: 1, max: 4 }),
          async (data, q, pageSize) => {
            const store = await open();
            try {
              const expected: string[] = [];
              const ids: string[] = [];
              for (const messages of data) {
                const id = (await store.create()).session.id;
                ids.unshift(id);
                const s = await store.open(undefined, id);
                if (messages.length > 0)
                  await s.append(messages.map((p) => message(Role.ASSISTANT, p)));
              }
              for (const id of ids) {
                const { entries } = await store.engine.read(
                  { workspace: "default", sessionId: id },
                  0,
                  1000,
                );
                for (const e of entries) if (bruteMatch(e, q)) expected.push(`${id}/${e.seq}`);
              }
              const got: string[] = [];
              let token = "";
              do {
                const page = await store.search({ query: q, pageSize, pageToken: token });
                expect(page.hits.length).toBeLessThanOrEqual(pageSize);
                got.push(...page.hits.map((h) => `${h.sessionId}/${h.seq}`));
                token = page.nextPageToken;
              } while (token !== "");
              expect(got).toEqual(expected);
            } finally {
              await fixture?.dispose();
              fixture = undefined;
            }
          },
        ),
        { numRuns: factory.name === "memory" ? 150 : 40 },
      );
    });

    it("the engine's pre-filter never drops a match its needles were made for", async () => {
      const store = await open();
      const s = await store.open(undefined, (await store.create()).session.id);
      await s.append([say('Say "HELLO" to C:\\Path, Kelvin \u212a and \u0130stanbul', "u1")]);
      for (const q of [
        "hello",
        '"hello"',
        "c:\\path",
        "kelvin",
        "k",
        "\u0130STANBUL",
        "istanbul",
      ]) {
        const got = (await store.search({ query: q })).hits.map((h) => h.entryId);
        expect(got, q).toEqual(q === "istanbul" ? [] : ["u1"]);
      }
    });
  });
}

/** The proto's rule written out independently: text parts, thinking and arguments' JSON, every word. */
function bruteMatch(entry: Entry, query: string): boolean {
  if (entry.kind.case !== "message") return false;
  const texts = entry.kind.value.content.map(({ part }) =>
    part.case === "text"
      ? part.value
      : part.case === "thinking"
        ? part.value.thinking
        : part.case === "toolCall" && part.value.arguments
          ? JSON.stringify(toJson(ValueSchema, part.value.arguments))
          : "",
  );
  // Character by character: case folding knows no context (a final sigma folds like any sigma).
  const fold = (s: string) => [...s].map((c) => c.toUpperCase().toLowerCase()).join("");
  const haystack = fold(texts.join("\n"));
  return query
    .split(/\s+/)
    .filter((w) => w !== "")
    .every((w) => haystack.includes(fold(w)));
}
