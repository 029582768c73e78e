import { create } from "@bufbuild/protobuf";
import fc from "fast-check";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { isSessiondError } from "../../src/core/errors.js";
import { openStore } from "../../src/index.js";
import { entryArb } from "../support/entry-arbitrary.js";
import { CHROMIUM, launch, tempDataDir, ViewerServer } from "./viewer-harness.js";

/**
 * The web viewer on a session of random entries of every kind (hard
 * strings, Struct data with keys such as "toString", 64-bit numbers,
 * timestamps at their edges, images of any bytes and type, tool calls with
 * any arguments): the tree draws every entry, each entry's page shows it,
 * and the page throws nothing and logs no error on the way.
 */
const WS = "random";
const SESSION = "random-entries";
const SEED = Number(process.env.SESSIOND_TEST_SEED ?? Date.now() % 2 ** 31);

/** Appends random entries (each under the leaf, or now and then under an earlier one); the ids stored. */
async function seed(dataDir: string): Promise<string[]> {
  const store = openStore({ dataDir });
  const ids: string[] = [];
  try {
    await store.create({ workspace: WS, sessionId: SESSION, title: "Random entries" });
    const s = await store.open(WS, SESSION);
    const samples = fc.sample(fc.tuple(entryArb, fc.nat(9)), { numRuns: 300, seed: SEED });
    for (const [entry, pick] of samples) {
      const parentId = pick < 2 && ids.length > 0 ? ids[(pick * 7) % ids.length] : undefined;
      const e = create(EntrySchema, { ...entry, id: "", seq: 0n, parentId });
      try {
        ids.push(...(await s.append(e)).entries.map((stored) => stored.id));
      } catch (err) {
        if (!isSessiondError(err) || err.code === "INTERNAL") throw err;
      }
    }
  } finally {
    await store.close();
  }
  return ids;
}

describe.skipIf(CHROMIUM === undefined)("the web viewer on random entries", () => {
  let browser: Browser;
  let page: Page;
  let server: ViewerServer;
  let ids: string[];
  const errors: string[] = [];

  beforeAll(async () => {
    const dataDir = tempDataDir();
    ids = await seed(dataDir);
    server = new ViewerServer(dataDir);
    await server.start();
    browser = await launch();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on("pageerror", (err) => errors.push(`page error: ${err.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(`console error: ${m.text()}`);
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it(`shows every entry, in the tree and on its own page, without an error (seed ${SEED})`, async () => {
    // Not only refusals: most of the samples are stored.
    expect(ids.length).toBeGreaterThan(100);
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${SESSION}`);
    await page.locator("#tree .row").first().waitFor();
    const drawn = await page.locator("#tree").getAttribute("data-count");
    // The root and every stored entry, one row each.
    expect(Number(drawn)).toBe(ids.length + 1);
    for (const id of ids) {
      await page.goto(`${server.url}/ui/#/w/${WS}/s/${SESSION}/e/${id}`);
      await page
        .locator(`article.entry[data-entry="${id}"]`)
        .waitFor({ timeout: 5_000 })
        .catch((err: Error) => {
          throw new Error(`entry ${id} not shown (${err.message}); errors: ${errors.join("; ")}`);
        });
    }
    expect(errors).toEqual([]);
  }, 300_000);
});
