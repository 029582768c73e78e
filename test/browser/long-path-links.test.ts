import type { Browser, Page, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { userMessage } from "../../src/core/entry-builders.js";
import { openStore } from "../../src/index.js";
import { CHROMIUM, noChromium, type ViewerServer, viewerFixture } from "./viewer-harness.js";

/**
 * Links into a session of 50,000+ messages on one path (issue 37, item 9):
 * a link to an entry near its end shows that entry before the tree has
 * finished loading (the entry is read by id, not after the tree page that
 * holds its row), and the context at the leaf shows its last message after
 * one GetState call (read from the end), "Earlier messages" reaching back
 * to the first. The tree's later pages are held back by the test where
 * "before the tree is loaded" is what is checked.
 */

const WS = "team";
const SESSION = "long-path";
const MESSAGES = 50_001;
const LAST = `m${MESSAGES - 1}`;
/** About 200 bytes a message: the whole state is several GetState pages (the old way read them all). */
const text = (i: number) => `message ${i} ${"of a long path ".repeat(13)}`;

async function seed(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({ workspace: WS, sessionId: SESSION, title: "long path" });
    const session = await store.open(WS, SESSION);
    for (let done = 0; done < MESSAGES; ) {
      const batch = [];
      for (let k = 0; k < 1000 && done < MESSAGES; k++, done++) {
        batch.push(userMessage(text(done), { id: `m${done}` }));
      }
      await session.append(batch);
    }
  } finally {
    await store.close();
  }
}

describe.skipIf(CHROMIUM === undefined)("links into a 50,000-message path, in Chromium", () => {
  let browser: Browser;
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

  it("a link to an entry near the end shows its content before the tree has finished loading", {
    timeout: 180_000,
  }, async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const release = await holdLaterTreePages(page);
    const target = `m${MESSAGES - 10}`;
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${SESSION}/e/${target}`);
    await page.locator(`article.entry[data-entry="${target}"]`).waitFor({ timeout: 60_000 });
    expect(await page.textContent("article.entry")).toContain(`message ${MESSAGES - 10} of`);
    expect(await page.getAttribute("#tree", "data-complete")).toBeNull();
    // Its row is not drawn yet: the page holding it is among those held back.
    expect(await page.locator(`#tree .row[data-id="${target}"]`).count()).toBe(0);
    release();
    await page.locator('#tree[data-complete="true"]').waitFor({ timeout: 120_000 });
    await page.locator(`#tree .row[data-id="${target}"]`).waitFor({ timeout: 30_000 });
    await page.close();
  });

  it("the context at the leaf shows its last message after one GetState call, and Earlier messages reaches the first", {
    timeout: 300_000,
  }, async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    let calls = 0;
    await page.route("**/sessiond.v1.SessionService/GetState", (route) => {
      calls++;
      void route.continue();
    });
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${SESSION}/e/${LAST}?tab=context`);
    const at = page.locator(`ol.state-messages > li.at[data-entry="${LAST}"]`);
    await at.waitFor({ timeout: 120_000 });
    expect(calls).toBe(1);
    expect(await at.textContent()).toContain(`message ${MESSAGES - 1} of`);
    expect(await page.textContent(".pane .count")).toContain(`${MESSAGES} messages`);
    const drawn = () => page.locator("ol.state-messages > li").count();
    expect(await drawn()).toBeLessThanOrEqual(200);

    // Click until the button goes: each click draws the run before (reading a page when needed).
    // Run in the page (a string: the test's TypeScript has no DOM types).
    await page.evaluate(`(async () => {
      const button = document.querySelector("button.earlier");
      if (button === null) throw new Error("no Earlier messages button");
      while (!button.hidden) {
        if (!button.disabled) button.click();
        await new Promise((done) => setTimeout(done, 0));
      }
    })()`);
    expect(await drawn()).toBe(MESSAGES);
    const ends = await page
      .locator("ol.state-messages")
      .evaluate((ol) => [
        ol.firstElementChild?.getAttribute("data-entry"),
        ol.firstElementChild?.querySelector(".from")?.textContent,
        ol.lastElementChild?.getAttribute("data-entry"),
      ]);
    expect(ends).toEqual(["m0", "1. from m0", LAST]);
    expect(await page.textContent(".pane .count")).toBe(`${MESSAGES} messages`);
    // The first page, then the rest backwards in pages of 2,000 messages at most.
    expect(calls).toBeGreaterThan(1);
    await page.close();
  });
});

if (CHROMIUM === undefined) noChromium("links into a 50,000-message path, in Chromium");
