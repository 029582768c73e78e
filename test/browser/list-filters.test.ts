import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { CHROMIUM, noChromium, type ViewerServer, viewerFixture } from "./viewer-harness.js";

/** The sessions list filters by several tags at once (issue 37, item 9). */

const WS = "team";

async function seed(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({ workspace: WS, sessionId: "a-prod", tags: { team: "a", env: "prod" } });
    await store.create({ workspace: WS, sessionId: "a-dev", tags: { team: "a", env: "dev" } });
    await store.create({ workspace: WS, sessionId: "b-prod", tags: { team: "b", env: "prod" } });
  } finally {
    await store.close();
  }
}

describe.skipIf(CHROMIUM === undefined)("the sessions list's filters, in Chromium", () => {
  let browser: Browser;
  let page: Page;
  let server: ViewerServer;

  viewerFixture(seed, async (f) => {
    ({ server, browser } = f);
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });

  const shown = () =>
    page.locator("tr.session-row").evaluateAll((rows) => rows.map((r) => r.dataset.session));

  it("two tags in the tags field list only the sessions that carry both", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}`);
    await page.locator('tr.session-row[data-session="b-prod"]').waitFor();
    await page.fill('input[name="tag"]', "team=a, env=prod");
    await page.click('form.filters button[type="submit"]');
    await expect.poll(() => page.url()).toContain("tag=env%3Dprod");
    await page.locator("p.status", { hasText: "1 sessions" }).waitFor();
    expect(await shown()).toEqual(["a-prod"]);
    // The link keeps both, and the field shows both when the link is opened.
    expect(await page.inputValue('input[name="tag"]')).toBe("team=a, env=prod");
  });
});

if (CHROMIUM === undefined) noChromium("the sessions list's filters, in Chromium");
