import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { userMessage } from "../../src/core/entry-builders.js";
import { openStore } from "../../src/index.js";
import { CHROMIUM, noChromium, type ViewerServer, viewerFixture } from "./viewer-harness.js";

/**
 * A deep link with a broken percent-escape (issue 37, item 4): the router
 * threw "URI malformed" and a fresh tab stayed on "Loading…". The viewer
 * says the link is malformed, and the next link it follows works.
 */

const WS = "team";
const BAD = "/ui/#/w/team/s/%E0%A4%A";

async function seed(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({ workspace: WS, sessionId: "fine", title: "A fine session" });
    await (await store.open(WS, "fine")).append([userMessage("hello", { id: "u1" })]);
  } finally {
    await store.close();
  }
}

describe.skipIf(CHROMIUM === undefined)("a malformed link in Chromium", () => {
  let browser: Browser;
  let server: ViewerServer;

  viewerFixture(seed, (f) => {
    ({ server, browser } = f);
  });

  /** A fresh tab that records the page's uncaught errors. */
  async function freshTab(): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (err) => errors.push(err.message));
    return { page, errors };
  }

  it("a fresh tab on a malformed link shows that the link is malformed, with no uncaught error", async () => {
    const { page, errors } = await freshTab();
    await page.goto(`${server.url}${BAD}`);
    const error = page.locator("#app .bad-link");
    await error.waitFor({ timeout: 5000 });
    expect(await error.textContent()).toContain("%E0%A4%A");
    expect(await page.locator("#app").textContent()).not.toContain("Loading…");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("after a malformed link the viewer follows the next one", async () => {
    const { page, errors } = await freshTab();
    await page.goto(`${server.url}${BAD}`);
    await page.locator("#app .bad-link").waitFor({ timeout: 5000 });
    await page.click("#app .bad-link a");
    await page.locator('tr.session-row[data-session="fine"]').waitFor();
    await page.goto(`${server.url}/ui/#/w/${WS}/s/fine/e/u1`);
    await page.locator('article.entry[data-entry="u1"]').waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it("an open session view that is sent to a malformed link shows the error, and Back returns to the session", async () => {
    const { page, errors } = await freshTab();
    await page.goto(`${server.url}/ui/#/w/${WS}/s/fine/e/u1`);
    await page.locator('article.entry[data-entry="u1"]').waitFor();
    await page.goto(`${server.url}/ui/#/w/${WS}/s/fine/e/%ZZ`);
    await page.locator("#app .bad-link").waitFor({ timeout: 5000 });
    expect(await page.locator("#app .bad-link").textContent()).toContain("%ZZ");
    await page.goBack();
    await page.locator('article.entry[data-entry="u1"]').waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });
});

if (CHROMIUM === undefined) noChromium("a malformed link in Chromium");
