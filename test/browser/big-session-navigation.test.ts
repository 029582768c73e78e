import type { Browser, Page, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { userMessage } from "../../src/core/entry-builders.js";
import { openStore } from "../../src/index.js";
import { CHROMIUM, noChromium, type ViewerServer, viewerFixture } from "./viewer-harness.js";

/**
 * Finding one's way in a big session (issue 37, item 9): a click on a row
 * shows its entry while the rest of the tree is still loading, and the
 * context at an entry opens at that entry, not at the session's first
 * message. The tree's later GetTree pages are held back by the test, so
 * "still loading" is a fact of the test, not a race with the machine.
 */

const WS = "team";
const SESSION = "big";
const MESSAGES = 5_000;

async function seed(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({ workspace: WS, sessionId: SESSION, title: "big" });
    const session = await store.open(WS, SESSION);
    for (let done = 0; done < MESSAGES; ) {
      const batch = [];
      for (let k = 0; k < 1000 && done < MESSAGES; k++, done++)
        batch.push(userMessage(`message ${done}`, { id: `m${done}` }));
      await session.append(batch);
    }
  } finally {
    await store.close();
  }
}

describe.skipIf(CHROMIUM === undefined)("navigating a big session, in Chromium", () => {
  let browser: Browser;
  let page: Page;
  let server: ViewerServer;

  viewerFixture(seed, (f) => {
    ({ server, browser } = f);
  });

  /** Lets the first GetTree page through and holds every later one until `release`. */
  async function holdLaterTreePages(p: Page): Promise<() => void> {
    let pages = 0;
    const held: Route[] = [];
    let released = false;
    await p.route("**/sessiond.v1.SessionService/GetTree", (route) => {
      pages++;
      if (pages === 1 || released) void route.continue();
      else held.push(route);
    });
    return () => {
      released = true;
      for (const route of held.splice(0)) void route.continue();
    };
  }

  it("a click on a row shows its entry while the rest of the tree is still loading", {
    timeout: 120_000,
  }, async () => {
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const release = await holdLaterTreePages(page);
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${SESSION}`);
    const row = page.locator('#tree .row[data-id="m20"]');
    await row.waitFor();
    await row.click();
    await page.locator('article.entry[data-entry="m20"]').waitFor({ timeout: 60_000 });
    expect(await page.textContent("article.entry")).toContain("message 20");
    expect(await page.getAttribute("#tree", "data-complete")).toBeNull();
    release();
    await page.locator('#tree[data-complete="true"]').waitFor({ timeout: 60_000 });
    await page.close();
  });

  it("a click survives the rows being redrawn between the press and the release", {
    timeout: 120_000,
  }, async () => {
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const release = await holdLaterTreePages(page);
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${SESSION}`);
    const row = page.locator('#tree .row[data-id="m20"]');
    await row.waitFor();
    const box = await row.boundingBox();
    if (box === null) throw new Error("row m20 is not on the screen");
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    // The next page arrives while the button is down: every row is drawn again.
    const before = await page.getAttribute("#tree", "data-count");
    release();
    await expect.poll(() => page.getAttribute("#tree", "data-count")).not.toBe(before);
    await page.mouse.up();
    await page.locator('article.entry[data-entry="m20"]').waitFor({ timeout: 60_000 });
    await page.close();
  });

  it("the context view opens at the selected entry, with earlier messages on request", {
    timeout: 120_000,
  }, async () => {
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${SESSION}/e/m3000?tab=context`);
    const at = page.locator('ol.state-messages > li.at[data-entry="m3000"]');
    await at.waitFor({ timeout: 60_000 });
    const drawn = () =>
      page
        .locator("ol.state-messages > li")
        .evaluateAll((li) => li.map((l) => l.getAttribute("data-entry")));
    const first = await drawn();
    expect(first[first.length - 1]).toBe("m3000");
    expect(first).not.toContain("m0");
    expect(first.length).toBeLessThanOrEqual(200);
    // On the screen, not only in the DOM: the pane scrolled to it.
    const inView = await at.evaluate((el) => {
      const r = el.getBoundingClientRect();
      const pane = el.closest(".pane-wrap")?.getBoundingClientRect();
      return pane !== undefined && r.bottom > pane.top && r.top < pane.bottom;
    });
    expect(inView).toBe(true);

    await page.click("button.earlier");
    await expect.poll(async () => (await drawn()).length).toBe(first.length + 200);
    const more = await drawn();
    expect(more.slice(200)).toEqual(first);
    expect(more[more.length - 1]).toBe("m3000");
    await page.close();
  });
});

if (CHROMIUM === undefined) noChromium("navigating a big session, in Chromium");
