import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { userMessage } from "../../src/core/entry-builders.js";
import { openStore } from "../../src/index.js";
import { CHROMIUM, noChromium, type ViewerServer, viewerFixture } from "./viewer-harness.js";

/**
 * The tree's room for previews (issue 37, item 9): the active path does not
 * move right at every branch point it passes, and the tree column can be
 * made wider by dragging its edge.
 */

const WS = "team";
const SESSION = "many-forks";
const FORKS = 20;

/** A main line with a side branch at each of its first 20 entries. */
async function seed(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({ workspace: WS, sessionId: SESSION, title: "many forks" });
    const session = await store.open(WS, SESSION);
    const entries = [userMessage("start", { id: "m0" })];
    for (let i = 0; i < FORKS; i++) {
      entries.push(userMessage(`side ${i}`, { id: `s${i}`, parentId: `m${i}` }));
      entries.push(userMessage(`main ${i + 1}`, { id: `m${i + 1}`, parentId: `m${i}` }));
    }
    await session.append(entries);
  } finally {
    await store.close();
  }
}

describe.skipIf(CHROMIUM === undefined)("the tree's layout, in Chromium", () => {
  let browser: Browser;
  let page: Page;
  let server: ViewerServer;

  viewerFixture(seed, async (f) => {
    ({ server, browser } = f);
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${SESSION}`);
    await page.locator('#tree[data-complete="true"]').waitFor({ timeout: 60_000 });
  });

  const indentOf = (id: string) =>
    page.locator(`#tree .row[data-id="${id}"] .indent`).evaluate((el) => el.clientWidth);

  it("the active path past 20 branch points is not indented; a branch off it is one step in", async () => {
    expect(await indentOf(`m${FORKS}`)).toBe(0);
    expect(await indentOf("s19")).toBeGreaterThan(0);
    expect(await indentOf("s19")).toBe(await indentOf("s0"));
  });

  it("dragging the tree column's edge makes the tree wider", async () => {
    const tree = page.locator(".tree-wrap");
    const before = (await tree.boundingBox())?.width ?? 0;
    const edge = await page.locator(".splitter").boundingBox();
    if (edge === null) throw new Error("no splitter on the page");
    const y = edge.y + edge.height / 2;
    await page.mouse.move(edge.x + edge.width / 2, y);
    await page.mouse.down();
    await page.mouse.move(edge.x + edge.width / 2 + 200, y, { steps: 5 });
    await page.mouse.up();
    const after = (await tree.boundingBox())?.width ?? 0;
    expect(after - before).toBeGreaterThan(150);
  });
});

if (CHROMIUM === undefined) noChromium("the tree's layout, in Chromium");
